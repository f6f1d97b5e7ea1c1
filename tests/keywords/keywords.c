/* keywords.c — the typed fields of a model whose names C cannot take as
 * written (tests/parity/c_keywords.nn, prefix m): each mangled member
 * (`default_`, `short_.case_`, `u_X_`, `main[1]`) is the tensor that the
 * reflection table, and so every checkpoint, names as written
 * (`default.weight`, `short.case`, `_X.weight`, `main.1.weight`); the
 * hparam constants are mangled where they would collide (M_H_ next to the
 * include guard M_H, M_NUM_PARAMS_ next to the built-in M_NUM_PARAMS, M_E_
 * next to math.h's M_E); the typed API runs with inputs named int and exp
 * (parameters int_ and exp_), and a save/load round trip keeps the values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "m.h"

_Static_assert(M_MAIN == 6 && M_NULL == 3 && M_H_ == 2 && M_NUM_PARAMS_ == 1 && M_E_ == 4, "hparam constants");
_Static_assert(M_NUM_PARAMS == 233 && M_NUM_STATE == 4 && M_NUM_METRICS == 1, "sizes");

static int fails;

/* The tensor `name` of the table must start at `p` and hold `bytes`. */
static void check(const m *model, const char *name, const float *p, size_t bytes, int state)
{
    size_t count;
    const nnc_tensor_info *t = m_tensors(&count);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(t[i].name, name))
            continue;
        const float *base = state ? (const float *)model->state : (const float *)model->params;
        if (base + t[i].offset != p || (size_t)t[i].size * sizeof(float) != bytes) {
            printf("FAIL %s: the member is at %td (%zu bytes), the table says %lld (%lld floats)\n", name, p - base,
                   bytes, (long long)t[i].offset, (long long)t[i].size);
            fails++;
        }
        return;
    }
    printf("FAIL %s: not in m_tensors()\n", name);
    fails++;
}

#define CHECK(name, member) check(&model, name, (const float *)&(member), sizeof(member), 0)

int main(void)
{
    m model;
    if (m_init(&model, 4, 1) != 0) {
        printf("FAIL m_init\n");
        return 1;
    }
    m_params *p = model.params;
    CHECK("default.weight", p->default_.weight);
    CHECK("default.bias", p->default_.bias);
    CHECK("default_.weight", p->default__.weight);
    CHECK("short.case", p->short_.case_);
    CHECK("short.errno", p->short_.errno_);
    CHECK("errno.weight", p->errno_.weight);
    CHECK("main.0.weight", p->main[0].weight);
    CHECK("main.1.bias", p->main[1].bias);
    CHECK("_Bool.weight", p->u_Bool_.weight);
    CHECK("__x.weight", p->u__x_.weight);
    CHECK("_X.bias", p->u_X_.bias);
    CHECK("m.weight", p->m.weight);
    CHECK("n.bias", p->n.bias);
    CHECK("out.weight", p->out.weight);
    CHECK("y0.weight", p->y0_.weight);
    check(&model, "short.static", model.state->short_.static_, sizeof model.state->short_.static_, 1);

    float int_[4][5], exp_[4][3], out[4][3];
    int32_t case_[4] = {0, 1, 2, 1};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++)
            int_[i][j] = (float)((i * 5 + j) % 7) / 7.0f - 0.5f;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            exp_[i][j] = (float)(i - j) / 4.0f;
    m_forward(&model, 4, (const float (*)[5])int_, (const float (*)[3])exp_, out);
    float loss = m_train_forward(&model, 4, (const float (*)[5])int_, (const float (*)[3])exp_, case_);
    m_backward(&model);
    if (!isfinite(loss) || !(loss > 0) || model.grads->u_X_.weight[0][0] == 0.0f ||
        model.grads->short_.case_[0][0] == 0.0f || model.state->short_.static_[0] == 0.0f) {
        printf("FAIL training pass: loss %g, d _X.weight[0][0] %g, d short.case[0][0] %g, short.static[0] %g\n",
               loss, model.grads->u_X_.weight[0][0], model.grads->short_.case_[0][0],
               model.state->short_.static_[0]);
        fails++;
    }
    /* a checkpoint round trip through the names as written */
    const char *path = "keywords_roundtrip.safetensors";
    const float want = p->u_X_.weight[1][2], swant = model.state->short_.static_[3];
    if (m_save(&model, path) != 0) {
        printf("FAIL m_save: %s\n", nnc_error());
        return 1;
    }
    p->u_X_.weight[1][2] = 0;
    model.state->short_.static_[3] = 0;
    if (m_load(&model, path) != 0 || p->u_X_.weight[1][2] != want || model.state->short_.static_[3] != swant) {
        printf("FAIL m_load: _X.weight[1][2] %g (want %g), short.static[3] %g (want %g)\n", p->u_X_.weight[1][2],
               want, model.state->short_.static_[3], swant);
        fails++;
    }
    remove(path);
    m_release(&model);
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
