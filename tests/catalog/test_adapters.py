import json
import subprocess
import sys

import pytest

from xamt.errors import UnknownLibraryError
from xamt.libraries.base import LibraryAdapter, resolve_ref
from xamt.libraries.registry import Registry, parse_library_list

SIX = ["numpy", "scipy", "torch", "tensorflow", "jax", "keras"]
#: the preferred (reference) order first, the other adapters after it by name
ALL = SIX + ["array_api_strict", "chainer", "dask", "keras_jax", "keras_torch", "mindspore", "mlx", "mxnet", "ndonnx",
                "paddle", "pytensor", "tinygrad"]


def test_registry_discovers_every_adapter():
    assert Registry().names() == ALL


def test_unknown_library_is_a_clear_error():
    with pytest.raises(UnknownLibraryError, match="unknown library 'pytorch'.*numpy"):
        parse_library_list("numpy,pytorch", Registry())


def test_library_list_parsing_dedupes_and_keeps_order():
    assert parse_library_list(" torch, numpy,torch ", Registry()) == ["torch", "numpy"]
    assert parse_library_list(None, Registry()) == ALL


def test_importing_adapters_imports_no_library():
    code = (
        "import sys; from xamt.libraries.registry import Registry; "
        "r = Registry(); [a.version() for a in r]; [a.describe() for a in r]; "
        "import json; print(json.dumps([m for m in ('torch','tensorflow','jax','keras','scipy','paddle','chainer','mindspore','mlx','ndonnx','onnxruntime','pytensor','tinygrad') "
        "if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_references_resolve_to_callables():
    for adapter in Registry():
        for ref in (adapter.from_numpy_ref, adapter.to_numpy_ref, adapter.dtype_ref,
                    adapter.compile_ref, adapter.out_call_ref, adapter.signature_hook_ref):
            if ref:
                assert callable(resolve_ref(ref)), ref
        assert set(adapter.dtypes.values()) <= {
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "bfloat16", "float32", "float64", "complex64", "complex128"}


def test_keras_version_names_its_backend(monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    assert Registry().get("keras").version().endswith("+tensorflow")
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert Registry().get("keras").version().endswith("+jax")


def test_an_adapter_for_a_missing_library_reports_not_installed():
    ghost = LibraryAdapter(name="ghost", import_name="ghost_library_not_installed_xyz",
                           distributions=("ghost",), namespaces=("ghost",), own_modules=("ghost",),
                           from_numpy_ref="x:y", to_numpy_ref="x:y", dtypes={})
    assert not ghost.is_installed()
    assert ghost.version() == "unknown"


@pytest.mark.parametrize("lib", ["numpy", "torch", "jax"])
def test_tensor_round_trip(lib):
    np = pytest.importorskip("numpy")
    pytest.importorskip(lib)
    adapter = Registry().get(lib)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = resolve_ref(adapter.from_numpy_ref)(x)
    back = resolve_ref(adapter.to_numpy_ref)(t)
    assert back.dtype == np.float32 and (back == x).all()


def test_torch_bfloat16_round_trip():
    np = pytest.importorskip("numpy")
    pytest.importorskip("torch")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    adapter = Registry().get("torch")
    x = np.array([1.5, -2.0, 3.25], dtype=ml_dtypes.bfloat16)
    t = resolve_ref(adapter.from_numpy_ref)(x)
    assert str(t.dtype) == "torch.bfloat16"
    back = resolve_ref(adapter.to_numpy_ref)(t)
    assert back.dtype == x.dtype and (back.astype(np.float32) == x.astype(np.float32)).all()
    # a 0-d array stays 0-d (np.ascontiguousarray made it 1-d)
    scalar = resolve_ref(adapter.from_numpy_ref)(np.array(1.5, dtype=ml_dtypes.bfloat16))
    assert tuple(scalar.shape) == () and float(scalar) == 1.5
