"""pool_before_relu: a model's ReLU -> max pool pairs rewritten as max pool -> ReLU.

Max pooling commutes with any non-decreasing function, so relu(max_pool(x)) gives max_pool(relu(x))'s values
(NaN included), and the same gradient: where the window's maximum is positive both route it to the same cell
(the first maximum), elsewhere both give zero. Only the index of a window with no positive cell would differ,
so pools that return indices are left alone. Moved after the pool, the ReLU passes over the pool's output
instead of its input (a quarter of the cells for the ResNet stem's 3x3 stride-2 pool), and a pooling operator
that torch.compile cannot fuse with a ReLU before it (poolkit's) reads its input once.
"""
import torch

# Max pools by class name, torch.nn's and poolkit.torch.nn's (same names and arguments).
_POOL_MODULES = {f"{kind}{r}d" for kind in ("MaxPool", "AdaptiveMaxPool") for r in (1, 2, 3)}
_POOL_HOMES = ("torch.nn.modules.pooling", "poolkit.torch.nn")
# torch.nn.functional's max pools, with the position of their return_indices argument.
_POOL_FUNCTIONS = {getattr(torch.nn.functional, f"{kind}{r}d"): at for kind, at in (("max_pool", 6),
                   ("adaptive_max_pool", 2)) for r in (1, 2, 3)}
_RELU_FUNCTIONS = {torch.nn.functional.relu, torch.relu, torch.relu_}


class _Tracer(torch.fx.Tracer):
    """Keeps poolkit's modules whole, as torch.nn's are (their forward checks its input in Python)."""

    def is_leaf_module(self, m, qualname):
        return type(m).__module__ == "poolkit.torch.nn" or super().is_leaf_module(m, qualname)


def _module(gm, node):
    return gm.get_submodule(node.target) if node.op == "call_module" else None


def _relu(gm, node):
    """None when node is no ReLU, else whether it is an in-place one."""
    if node.op == "call_module":
        m = _module(gm, node)
        return m.inplace if type(m) is torch.nn.ReLU else None
    if node.op == "call_function" and node.target in _RELU_FUNCTIONS and node.args:
        return node.target is torch.relu_ or bool(node.kwargs.get("inplace", node.args[1:2] == (True,)))
    if node.op == "call_method" and node.target in ("relu", "relu_") and len(node.args) == 1:
        return node.target == "relu_"
    return None


def _is_max_pool(gm, node):
    if node.op == "call_module":
        m = _module(gm, node)
        return (type(m).__name__ in _POOL_MODULES and type(m).__module__ in _POOL_HOMES
                and not getattr(m, "return_indices", False))
    if node.op != "call_function" or node.target not in _POOL_FUNCTIONS:
        return False
    at = _POOL_FUNCTIONS[node.target]
    return not (node.kwargs.get("return_indices", False) or (len(node.args) > at and node.args[at]))


def pool_before_relu(model):
    """Returns model as a torch.fx.GraphModule (sharing model's parameters and submodules) in which every ReLU whose
    output goes only to a max pool without indices (torch.nn's or poolkit's MaxPool*d / AdaptiveMaxPool*d module,
    or torch.nn.functional's max_pool*d / adaptive_max_pool*d) runs after that pool instead, on its output: the
    same values and gradients (see the module's doc). An in-place ReLU whose input is used elsewhere too is left
    where it is (there it changes what the other users read). Raises TypeError when torch.fx cannot trace
    model (control flow on tensor values, for instance)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"poolkit: pool_before_relu: model must be a torch.nn.Module, got {type(model).__name__}")
    try:
        graph = _Tracer().trace(model)
    except Exception as e:  # torch.fx raises several types (TraceError, TypeError, NotImplementedError, ...)
        raise TypeError(f"poolkit: pool_before_relu: torch.fx cannot trace {type(model).__name__}: {e}") from e
    gm = torch.fx.GraphModule(model, graph, class_name=type(model).__name__)
    for relu in list(gm.graph.nodes):
        inplace = _relu(gm, relu)
        if inplace is None or len(relu.users) != 1:
            continue
        pool = next(iter(relu.users))
        x = relu.args[0]
        if (not isinstance(x, torch.fx.Node) or not _is_max_pool(gm, pool) or pool.args[:1] != (relu,)
                or (inplace and len(x.users) != 1)):
            continue
        pool.replace_input_with(relu, x)
        with gm.graph.inserting_after(pool):
            moved = gm.graph.node_copy(relu, lambda n: pool if n is x else n)
        pool.replace_all_uses_with(moved, delete_user_cb=lambda user: user is not moved)
        gm.graph.erase_node(relu)
    gm.graph.lint()
    gm.recompile()
    return gm
