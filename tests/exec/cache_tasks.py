"""Worker tasks for tests/exec/test_caches.py (imported inside sandbox workers)."""
import collections


def jax_cache_events() -> dict:
    """Run a few eager JAX operations and count this process's persistent-cache hits and misses."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    events: collections.Counter = collections.Counter()
    jax.monitoring.register_event_listener(lambda event, **_: events.update([event.rsplit("/", 1)[-1]]))
    for shape in [(3,), (2, 5)]:
        x = np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
        for f in (jnp.sin, jnp.cumsum, jnp.sort):
            f(x).block_until_ready()
    return {k: events[k] for k in ("cache_hits", "cache_misses")}


def torch_cache_events() -> dict:
    """Compile two small programs with ``torch.compile`` (the adapter's call) and count this
    process's Inductor FX-graph cache hits and misses."""
    import torch
    import torch._dynamo.utils as utils

    from xamt.libraries.torch import call_compiled

    for n in (3, 5):
        call_compiled("torch:sin", torch.linspace(-1, 1, n))
    stats = utils.counters["inductor"]
    return {"cache_hits": stats["fxgraph_cache_hit"], "cache_misses": stats["fxgraph_cache_miss"]}
