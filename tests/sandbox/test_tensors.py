"""Library tensors: converted to numpy in the worker, with their type, device and dtype recorded.

(TensorFlow and JAX conversions are exercised by the corpus tests' good tasks.)
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from sandbox import Ref, Status, Step, Task, TensorInfo

from .conftest import BAD


def torch_dtype(name: str) -> list:
    """Steps that make ``torch.<name>`` available as Ref(1) (a dtype object cannot be sent)."""
    return [Step("importlib:import_module", ("torch",)), Step("builtins:getattr", (Ref(0), name))]


def test_torch_results_become_numpy_with_device_and_dtype(torch_pool):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((2, 3), dtype=np.float32)
    (outcome,) = torch_pool.run([Task("torch:add", (a, b), convert="torch:from_numpy")])
    assert type(outcome.value) is np.ndarray and outcome.value.dtype == np.float32
    np.testing.assert_array_equal(outcome.value, a + b)
    assert outcome.tensors == (TensorInfo(0, "torch.Tensor", "cpu", "torch.float32"),)


def test_dtypes_numpy_lacks(torch_pool):
    bf16 = Task.chain(torch_dtype("bfloat16") + [Step("torch:full", ((2, 2), 1.5), {"dtype": Ref(1)})])
    chalf = Task.chain(torch_dtype("complex32") + [Step("torch:ones", (3,), {"dtype": Ref(1)})])
    first, second = torch_pool.run([bf16, chalf])
    assert first.value.dtype == np.dtype(ml_dtypes.bfloat16) and first.tensors[0].dtype == "torch.bfloat16"
    np.testing.assert_array_equal(first.value.astype(np.float32), np.full((2, 2), 1.5, np.float32))
    assert second.value.dtype == np.complex64 and second.tensors[0].dtype == "torch.complex32"


def test_structures_of_tensors_and_layouts(torch_pool):
    x = np.array([[3.0, -1.0], [2.0, 5.0]], dtype=np.float64)
    max_dim, transposed, method, bound = torch_pool.run([
        Task("torch:max", (x,), {"dim": 0}, convert="torch:from_numpy"),  # a namedtuple of two tensors
        Task(".t", (x,), convert="torch:from_numpy"),                       # a non-contiguous view
        Task("torch:Tensor.abs", (x,), convert="torch:from_numpy"),         # an unbound method
        Task("torch:neg", (x,), convert="torch:as_tensor", device="cpu"),   # device placement
    ])
    values, indices = max_dim.value
    np.testing.assert_array_equal(values, [3.0, 5.0])
    np.testing.assert_array_equal(indices, [0, 1])
    assert [t.index for t in max_dim.tensors] == [0, 1] and max_dim.tensors[1].dtype == "torch.int64"
    np.testing.assert_array_equal(transposed.value, x.T)
    np.testing.assert_array_equal(method.value, np.abs(x))
    np.testing.assert_array_equal(bound.value, -x)


def test_a_tensor_that_cannot_be_converted_is_unserializable(torch_pool):
    (outcome,) = torch_pool.run([Task("torch:empty", (2,), {"device": "meta"}), ])
    assert outcome.status == Status.UNSERIALIZABLE and outcome.error_type, outcome
    assert torch_pool.run([Task(BAD + "echo", (1,))])[0].value == 1
