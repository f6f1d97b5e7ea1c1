"""Twin of c_keywords.nn: modules, params and a buffer named like C keywords
and C library names (`default`, `case`, `errno`, `_Bool`, `__x`), set by
name (add_module, register_parameter, register_buffer), so that the
state_dict keys are those of the .nn as written."""
import torch
import nnlib as L

B = 8


class Int(torch.nn.Module):
    """The layer `int`: params `case` and `errno`, state `static`."""

    def __init__(self, d, short, default=2):
        super().__init__()
        self.default = default
        self.register_parameter("case", L.param(short, d))
        self.register_parameter("errno", L.param(short))
        self.register_buffer("static", torch.zeros(short))

    def forward(self, x):
        double = x @ torch.transpose(getattr(self, "case"), 0, 1) + getattr(self, "errno")
        for _ in range(self.default):
            double = double + 0.5 * torch.tanh(double)
        static = getattr(self, "static")
        register = double + static
        if self.training:
            with torch.no_grad():
                static.mul_(0.5).add_(double.mean(dim=0) * 0.5)
        return register


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        add = self.add_module
        add("default", L.Dense(5, 6, activation="tanh"))
        add("default_", L.Dense(5, 6))
        add("short", Int(6, 4))
        add("errno", L.Dense(4, 3))
        add("main", torch.nn.ModuleList([L.Dense(4, 4), L.Dense(4, 4)]))
        add("_Bool", torch.nn.LayerNorm(3, eps=1e-5))
        for name in ("__x", "_X", "m", "n", "out"):
            add(name, L.Dense(3, 3))
        add("y0", L.Dense(3, 3, activation="tanh"))

    def forward(self, int_, exp):
        f = self._modules
        eof = f["default"](int_) + f["default_"](int_)
        double = f["main"][1](f["main"][0](f["short"](eof)))
        if_ = f["errno"](double) + exp
        null = f["_Bool"](if_)
        return f["y0"](f["__x"](null) + f["_X"](null) + f["m"](null) * f["n"](null) + f["out"](null))


def build():
    return M()


def inputs(gen):
    return [torch.randn(B, 5, generator=gen), torch.randn(B, 3, generator=gen)]


def labels(gen):
    return [torch.randint(0, 3, (B,), generator=gen).to(torch.int32)]


def loss(m, xs, ys):
    return L.cross_entropy(m(*xs), ys[0])


def metrics(m, xs, ys):
    return {"case": L.accuracy(m(*xs), ys[0])}
