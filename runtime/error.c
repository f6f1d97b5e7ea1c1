/* error.c — the runtime's last-error message.
 *
 * Every runtime call that can fail returns -1 and leaves one line here that
 * names the file and what is wrong, so that the driver (and any host
 * program) can report it as is.  The message is forced onto one line
 * because callers print it as "<prog>: <message>" and tests and scripts
 * rely on a failure being exactly one line of stderr.  It is thread-local
 * so that host programs running models on several threads do not garble
 * each other's messages.
 */
#include <stdarg.h>
#include <stdio.h>

#include "nnc_internal.h"
#include "nnc_runtime.h"

static _Thread_local char nnc_err_buf[1024] = "no error";
static _Thread_local int nnc_err_set = 0;

const char *nnc_error(void) { return nnc_err_buf; }

int nnc_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(nnc_err_buf, sizeof nnc_err_buf, fmt, ap);
    va_end(ap);
    if (len < 0)
        snprintf(nnc_err_buf, sizeof nnc_err_buf, "error (message could not be formatted)");
    /* One line, no control characters: a file name or a JSON key read from a
     * malformed file could otherwise inject newlines or escape codes. */
    for (char *p = nnc_err_buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    nnc_err_set = 1;
    return -1;
}

void nnc__error_clear(void)
{
    snprintf(nnc_err_buf, sizeof nnc_err_buf, "no error");
    nnc_err_set = 0;
}

int nnc__error_isset(void) { return nnc_err_set; }
