"""Twin of attn_causal_odd.nn: attn_causal16.py's network at T = 21,
d 36, 3 heads of 12 and then 1 of 36."""
import attn_causal16 as base

T, D = 21, 36
loss = base.loss


def build():
    return base.AttnCausal(T, base.V, D, 3)


def inputs(gen):
    return base.token_inputs(gen, T)


def labels(gen):
    return base.token_labels(gen, T, 15)
