"""The CPU dispatch pin and the reference digest: the same seed, the same bits on every x86-64
CPU with AVX2 (CI runs on Intel and AMD machines in turn)."""

import json
import subprocess
import sys

import pytest
import torch

from attention_dynamics.bitwise import REFERENCE_DIGESTS, parameter_digest, training_digest
from attention_dynamics.dispatch import (
    UNPIN_VARIABLE,
    child_environment,
    pin_cpu_dispatch,
    unpinned_warning,
)


def run_python(code: str, **environment: str) -> str:
    """Run ``code`` in a fresh interpreter with ``environment`` added to a clean copy of this
    one's (no pin variables inherited); return its standard output."""
    completed = subprocess.run([sys.executable, "-c", code],
                               env=child_environment(pinned=True) | environment,
                               capture_output=True, text=True, check=True)
    return completed.stdout


def test_the_pin_sets_what_is_unset_and_respects_what_is_set():
    environ = {"MKL_CBWR": "COMPATIBLE"}
    assert pin_cpu_dispatch(environ) == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert environ["MKL_CBWR"] == "COMPATIBLE"
    assert pin_cpu_dispatch({UNPIN_VARIABLE: "1"}) == {}


def test_importing_the_library_pins_torch_before_its_first_operation():
    code = ("import torch, attention_dynamics, json\n"
            "from attention_dynamics.dispatch import dispatch_state\n"
            "torch.ones(2) + 1\n"
            "print(json.dumps(dispatch_state()))")
    state = json.loads(run_python(code))
    assert state["cpu_capability"] == "AVX2" and state["pinned"] == "yes"
    assert state["mkl_cbwr"] == "AVX2,STRICT" and state["onednn_max_cpu_isa"] == "AVX2"
    unpinned = json.loads(run_python(code, ATEN_CPU_CAPABILITY="default"))
    assert unpinned["cpu_capability"] == "DEFAULT" and unpinned["pinned"] == "no"
    assert "ATEN_CPU_CAPABILITY" not in json.loads(run_python(
        code.replace("print(json.dumps(dispatch_state()))",
                     "import os; print(json.dumps(dict(os.environ)))"), **{UNPIN_VARIABLE: "1"}))
    assert "aten_cpu_capability=default" in unpinned_warning(unpinned)
    assert unpinned_warning(state) is None


def test_the_parameter_digest_sees_every_bit():
    model = torch.nn.Linear(3, 2)
    before = parameter_digest(model)
    with torch.no_grad():
        weight = model.weight.view(-1)
        weight[0] = torch.nextafter(weight[0], torch.tensor(1.0))   # one unit in the last place
    assert parameter_digest(model) != before and len(before) == 64


def test_a_bad_reference_model_is_refused():
    with pytest.raises(ValueError, match="arch"):
        training_digest("gru")


def test_this_machine_computes_the_books_bits():
    """Three small training runs (one thread, the pin applied by the library's import) end at the
    committed parameters to the last bit."""
    code = ("import json\nfrom attention_dynamics.bitwise import machine_digests\n"
            "print(json.dumps(machine_digests()))")
    assert json.loads(run_python(code)) == REFERENCE_DIGESTS


def test_a_childs_environment_leaves_the_choice_to_the_child():
    parent = {"PATH": "/bin", "MKL_CBWR": "AVX2,STRICT", UNPIN_VARIABLE: "1"}
    assert child_environment(True, parent) == {"PATH": "/bin"}
    assert child_environment(False, parent) == {"PATH": "/bin", UNPIN_VARIABLE: "1"}
    assert parent["MKL_CBWR"] == "AVX2,STRICT"  # the parent's own is left as it was
