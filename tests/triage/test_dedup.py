"""Root causes: the trigger of an input, the key before and after triage."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from xamt.errors import DataFileError
from xamt.findings import FindingClass
from xamt.triage.dedup import OUT_OF_DOMAIN, Candidate, finding_signature, load_triage_per_cause, trigger


@pytest.mark.parametrize("values, want", [
    ({0: np.array([1.0, np.nan, np.inf], np.float32)}, "nan"),
    ({0: np.array([1.0, -np.inf], np.float64), 1: np.array([np.inf])}, "+inf"),
    ({0: np.array([1.0, 1e-45], np.float32)}, "subnormal"),
    ({0: np.array([1, np.iinfo(np.int32).min], np.int32)}, "int-extreme"),
    ({0: np.array([0, 255], np.uint8)}, "int-extreme"),
    ({0: np.array([3.0, 1e38], np.float32)}, "large"),
    ({0: np.array([300.0], np.float16)}, "large"),
    ({0: np.zeros((0, 3), np.float32)}, "empty"),
    ({0: np.array([1.0, -0.0])}, "-0"),
    ({0: np.array([1.0, -2.0])}, "negative"),
    ({0: np.array([1.0, 2.0]), 1: -3.5}, "negative"),
    ({0: np.zeros(3, np.int64)}, "zero"),
    # divide(-1.2e-38, 0): the zero divisor is the trigger, not the negative dividend
    ({0: np.array([[-1.1754944e-38]], np.float32), 1: np.array([[0.0]], np.float32)}, "zero"),
    ({0: np.array([1.0, 2.0]), 1: "mean", 2: None}, "ordinary"),
    ({0: [np.array([1.0]), np.array([np.nan])]}, "nan"),
])
def test_trigger_is_the_most_telling_kind_of_value(values, want):
    assert trigger(values) == want


def test_the_signature_is_the_trigger_the_rule_or_how_a_crash_died():
    vals = {0: np.array([1.0, np.inf], np.float32)}
    assert finding_signature(FindingClass.VALUE, vals) == "+inf"
    assert finding_signature(FindingClass.SUBNORMAL, {0: np.float32([1e-45, 1])}) == "subnormal"
    assert finding_signature(FindingClass.STATUS, vals, "ValueError: # must be positive") \
        == "ValueError: # must be positive"
    assert finding_signature(FindingClass.VALIDATION, vals, "returns where others raise | x") \
        == "returns where others raise | x"
    assert finding_signature(FindingClass.CRASH, vals, status="timeout") == "timeout"
    # a validation finding of a value divergence has no rule: one per namespace (its family),
    # whatever out-of-domain value showed it
    assert finding_signature(FindingClass.VALIDATION, vals) == OUT_OF_DOMAIN
    assert finding_signature(FindingClass.VALIDATION, {0: np.array([-2.0])}) == OUT_OF_DOMAIN
    # float32 and float64 of one cause have one signature
    assert finding_signature(FindingClass.NAN, {0: np.float64([np.nan])}) == \
        finding_signature(FindingClass.NAN, {0: np.float32([np.nan])})


def test_a_refusal_rule_keys_its_finding_without_the_api_s_own_names():
    """scipy's pbvv and pbdv refuse with one allocation message naming each: one finding of the
    namespace (its family), two occurrences; jax.random's f and chisquare return where others
    refuse dfnum <= 0 and df <= 0, one cause as well. Another message stays another finding."""
    vals = {0: np.array([1.0], np.float32)}
    alloc = "scipy.special/{}: (memory allocation failed)"
    pbvv, pbdv = NS(qualname="scipy.special.pbvv"), NS(qualname="scipy.special.pbdv")
    assert finding_signature(FindingClass.STATUS, vals, alloc.format("pbvv"), member=pbvv) == \
        finding_signature(FindingClass.STATUS, vals, alloc.format("pbdv"), member=pbdv)
    f, chisq = NS(qualname="jax.random.f"), NS(qualname="jax.random.chisquare")
    assert finding_signature(FindingClass.VALIDATION, vals, "returns where others raise | dfnum <= 0", member=f) == \
        finding_signature(FindingClass.VALIDATION, vals, "returns where others raise | df <= 0", member=chisq)
    assert finding_signature(FindingClass.STATUS, vals, alloc.format("pbvv"), member=pbvv) != \
        finding_signature(FindingClass.STATUS, vals, "scipy.special/pbvv: (loss of precision)", member=pbvv)


def test_the_cause_before_triage_names_the_api_family_signal_and_trigger():
    group = NS(key="g", members=[NS(qualname="numpy.exp", library="numpy", canonical="exp", call="function"),
                                 NS(qualname="jax.numpy.exp", library="jax", canonical="exp", call="function")])
    cand = Candidate(group=group, input=None, values={0: np.float32([np.inf])}, members=[0, 1],
                     results=[], kind="value", member=1, signature="float32/1i")
    assert cand.cause() == ("jax:exp", "value", "+inf")
    status = Candidate(group=group, input=None, values={0: np.float32([np.inf])}, members=[0, 1],
                       results=[], kind="status", member=0, signature="ValueError: #")
    # a refusal is its namespace's: one error message there is one code path, whichever API
    assert status.cause() == ("numpy:numpy", "status", "ValueError: #")
    log1p = NS(key="h", members=[NS(qualname="numpy.log1p", library="numpy", canonical="log1p", call="function")])
    other = Candidate(group=log1p, input=None, values={0: np.float32([1.0])}, members=[0],
                      results=[], kind="status", member=0, signature="ValueError: #")
    assert other.cause() == status.cause()


def test_an_api_family_is_its_distribution_or_its_operation():
    from xamt.triage.dedup import api_family

    scipy = NS(qualified_parents=("scipy.stats",), namespaces=("scipy.stats", "scipy.stats.gamma"))
    torch = NS(qualified_parents=(), namespaces=("torch", "torch.distributions"))

    def m(lib, qualname, canonical, call="function"):
        return NS(library=lib, qualname=qualname, canonical=canonical, call=call)

    # one distribution's methods fold; another distribution's do not
    assert api_family(m("scipy", "scipy.stats.gamma.pdf", "gamma_pdf"), scipy) == \
        api_family(m("scipy", "scipy.stats.gamma.logpdf", "gamma_logpdf"), scipy) == "scipy:scipy.stats.gamma"
    assert api_family(m("scipy", "scipy.stats.beta.pdf", "beta_pdf"), scipy) == "scipy:scipy.stats.beta"
    # a constructed class's methods fold; a module's functions keep their operation
    assert api_family(m("torch", "torch.distributions.Exponential.icdf", "exponential_icdf", "constructed"),
                      torch) == "torch:torch.distributions.Exponential"
    # function, method and in-place forms of one operation fold; compiled calls stay apart
    forms = [m("torch", "torch.lcm", "lcm"), m("torch", "torch.Tensor.lcm", "lcm", "method"),
             m("torch", "torch.Tensor.lcm_", "lcm", "method")]
    assert {api_family(f, torch) for f in forms} == {"torch:lcm"}
    assert api_family(m("torch", "torch.lcm", "lcm", "compiled"), torch) == "torch:lcm [compiled]"
    assert api_family(m("torch", "torch.gcd", "gcd"), torch) == "torch:gcd"


def test_a_validation_family_is_the_namespace_that_does_not_check():
    from xamt.triage.dedup import validation_family

    jax = NS(qualified_parents=("jax.scipy.stats",), namespaces=("jax.scipy.stats", "jax.scipy.stats.pareto"))
    torch = NS(qualified_parents=(), namespaces=("torch", "torch.special", "torch.distributions"))

    def m(lib, qualname, canonical, call="function"):
        return NS(library=lib, qualname=qualname, canonical=canonical, call=call)

    # every distribution of a namespace that does not validate is one cause
    assert validation_family(m("jax", "jax.scipy.stats.pareto.sf", "pareto_sf"), jax) == \
        validation_family(m("jax", "jax.scipy.stats.binom.pmf", "binom_pmf"), jax) == "jax:jax.scipy.stats"
    assert validation_family(m("torch", "torch.distributions.Laplace.icdf", "laplace_ppf", "constructed"),
                             torch) == "torch:torch.distributions"
    # a module's functions fold under the module; another module stays apart; compiled apart
    assert validation_family(m("torch", "torch.special.airy_ai", "airy_ai"), torch) == "torch:torch.special"
    assert validation_family(m("torch", "torch.lcm", "lcm"), torch) == "torch:torch"
    assert validation_family(m("torch", "torch.special.airy_ai", "airy_ai", "compiled"), torch) == \
        "torch:torch.special [compiled]"


def test_triage_per_cause_is_checked(tmp_path):
    assert load_triage_per_cause() >= 1
    bad = tmp_path / "triage.toml"
    bad.write_text("[dedup]\ntriage_per_cause = 0\n")
    with pytest.raises(DataFileError, match="triage_per_cause"):
        load_triage_per_cause(bad)


def test_a_crash_family_folds_siblings_that_share_a_stem():
    from xamt.triage.dedup import crash_family

    scipy = NS(qualified_parents=("scipy.stats",), namespaces=("scipy.special", "scipy.stats"))

    def m(lib, qualname, canonical, call="function"):
        return NS(library=lib, qualname=qualname, canonical=canonical, call=call)

    # the Mathieu functions crash in one Fortran routine: one root cause, five occurrences
    names = ("mathieu_cem", "mathieu_modcem1", "mathieu_modsem2")
    assert {crash_family(m("scipy", f"scipy.special.{n}", n), scipy) for n in names} == {"scipy:mathieu_*"}
    assert crash_family(m("scipy", "scipy.special.obl_ang1_cv", "obl_ang1_cv"), scipy) == "scipy:obl_*"
    # a name without a stem keeps its own family, a distribution stays one, compiled stays apart
    assert crash_family(m("torch", "torch.Tensor.lcm_", "lcm_", "method")) == "torch:lcm"
    assert crash_family(m("scipy", "scipy.stats.poisson.entropy", "poisson_entropy"), scipy) == \
        "scipy:scipy.stats.poisson"
    assert crash_family(m("jax", "jax.numpy.lcm", "lcm", "compiled")) == "jax:lcm [compiled]"


def test_a_cause_cluster_folds_one_namespace_class_and_trigger_and_keeps_crashes_and_policies_apart():
    from xamt.triage.dedup import cause_cluster

    keras = NS(qualified_parents=(), namespaces=("keras.ops", "keras.activations"))
    scipy = NS(qualified_parents=("scipy.stats",), namespaces=("scipy.special", "scipy.stats"))

    def m(lib, qualname, canonical, call="function"):
        return NS(library=lib, qualname=qualname, canonical=canonical, call=call)

    nan = FindingClass.NAN
    # two activations of one namespace taking NaN to a number: one cluster
    assert cause_cluster(nan, m("keras", "keras.ops.soft_shrink", "soft_shrink"), keras, "nan") == \
        cause_cluster(nan, m("keras", "keras.ops.hard_shrink", "hard_shrink"), keras, "nan") == \
        "nan: keras:keras.ops: nan"
    # another trigger, class, namespace or a compiled call is another cluster
    others = {cause_cluster(nan, m("keras", "keras.ops.soft_shrink", "soft_shrink"), keras, "+inf"),
              cause_cluster(FindingClass.VALUE, m("keras", "keras.ops.soft_shrink", "soft_shrink"), keras, "nan"),
              cause_cluster(nan, m("keras", "keras.activations.soft_shrink", "soft_shrink"), keras, "nan"),
              cause_cluster(nan, m("keras", "keras.ops.soft_shrink", "soft_shrink", "compiled"), keras, "nan")}
    assert len(others) == 4 and "nan: keras:keras.ops: nan" not in others
    # crashes of two routines of one namespace stay apart; a policy is one cluster in every library
    crash = FindingClass.CRASH
    assert cause_cluster(crash, m("scipy", "scipy.special.pbdv", "pbdv"), scipy, "crashed") != \
        cause_cluster(crash, m("scipy", "scipy.special.obl_ang1", "obl_ang1"), scipy, "crashed")
    # a refusal's message naming the API itself, or the argument its condition is about, does
    # not part one namespace's behaviour
    status = FindingClass.STATUS
    alloc = "SpecialFunctionError: scipy.special/{}: (memory allocation failed) memory allocation error"
    assert cause_cluster(status, m("scipy", "scipy.special.pbvv", "pbvv"), scipy, alloc.format("pbvv")) == \
        cause_cluster(status, m("scipy", "scipy.special.pbdv", "pbdv"), scipy, alloc.format("pbdv")) == \
        cause_cluster(status, m("scipy", "scipy.special.pro_ang1_cv", "pro_ang1_cv"), scipy, alloc.format("pro_ang#_cv"))
    jaxr = NS(qualified_parents=(), namespaces=("jax.random",))
    val = FindingClass.VALIDATION
    assert cause_cluster(val, m("jax", "jax.random.f", "f"), jaxr, "returns where others raise | ValueError: dfnum <= #") == \
        cause_cluster(val, m("jax", "jax.random.chisquare", "chisquare"), jaxr,
                      "returns where others raise | ValueError: df <= #") == \
        "validation: jax:jax.random: returns where others raise | ValueError: <arg> <= #"
    # another condition, or a message about another routine, stays apart
    assert cause_cluster(val, m("jax", "jax.random.f", "f"), jaxr, "returns where others raise | ValueError: dfnum > #") != \
        cause_cluster(val, m("jax", "jax.random.f", "f"), jaxr, "returns where others raise | ValueError: dfnum <= #")
    assert cause_cluster(status, m("scipy", "scipy.special.pbvv", "pbvv"), scipy, alloc.format("pbvv")) != \
        cause_cluster(status, m("scipy", "scipy.special.pbvv", "pbvv"), scipy, alloc.format("pbdv"))
    assert cause_cluster(FindingClass.POLICY, m("jax", "jax.numpy.prod", "prod"), None, "x", "flush-to-zero") == \
        cause_cluster(FindingClass.POLICY, m("keras", "keras.ops.prod", "prod"), keras, "y", "flush-to-zero") == \
        "policy: flush-to-zero"


def test_sibling_names_differ_in_one_word_pair_at_one_place():
    from xamt.triage.dedup import load_lineage, siblings

    words = load_lineage().sibling_words
    assert siblings("argmin", "argmax", words) and siblings("argmax", "argmin", words)
    assert siblings("bitwise_left_shift", "bitwise_right_shift", words)
    assert siblings("nancumsum", "nancumprod", words)
    assert siblings("minimum", "maximum", words)
    assert siblings("max", "maximum", words) and siblings("nanmin", "nanminimum", words)
    # pairs that share a word join: max and minimum through maximum (XLA's compiled max and
    # minimum drop NaN alike); lcm computed through gcd
    assert siblings("max", "minimum", words) and siblings("minimum", "max", words)
    assert siblings("gcd", "lcm", words) and siblings("lcm_", "gcd_", words)
    # Hankel and Toeplitz matrices, built from one template (JAX: conv_general_dilated_patches)
    assert siblings("hankel", "toeplitz", words) and not siblings("hankel", "circulant", words)
    assert not siblings("max", "minimum", (("min", "max"), ("max", "maximum")))
    # two places changed, another word, or the same name: not siblings by this rule
    assert not siblings("min_max", "max_min", words)
    assert not siblings("sinh", "cosh", words)
    assert not siblings("argmin", "argmin", words)
    assert not siblings("cumsum", "cumprod_", words)


def test_same_cause_needs_the_same_kernels_and_a_call_a_shared_function_or_a_sibling():
    from xamt.triage.dedup import same_cause

    words = (("min", "max"),)
    top_k = {"kernels": "tensorflow", "name": "topk", "entry": "aa", "calls": ["aa", "bb"]}
    sort = {"kernels": "tensorflow", "name": "sort", "entry": "cc", "calls": ["cc", "aa", "bb", "dd"]}
    # tnp.sort runs top_k's function: one cause, whichever was filed first
    assert same_cause(top_k, sort, words) and same_cause(sort, top_k, words)
    # the same call seen through XLA is another implementation
    assert not same_cause(top_k, {**sort, "kernels": "xla"}, words)
    # sharing a helper is not enough: neither API's own function is in the other's calls
    other = {"kernels": "tensorflow", "name": "cumsum", "entry": "ee", "calls": ["ee", "bb"]}
    assert not same_cause(top_k, other, words)
    # native code has no entry: only its name can relate it
    argmin = {"library": "tensorflow", "kernels": "tensorflow", "name": "argmin", "entry": None, "calls": []}
    argmax = {"library": "tensorflow", "kernels": "tensorflow", "name": "argmax", "entry": None, "calls": []}
    assert same_cause(argmin, argmax, words) and not same_cause(argmin, argmax, ())
    assert not same_cause({**argmin, "kernels": ""}, {**argmax, "kernels": ""}, words)
    # Keras runs TensorFlow's kernels: its argmax is TensorFlow's namesake
    assert same_cause({**argmin, "library": "keras"}, argmin, words)
    # JAX and TensorFlow's compiled calls share XLA, not their front ends
    assert not same_cause({**argmin, "kernels": "xla"}, {**argmin, "library": "jax", "kernels": "xla"}, words)


def test_a_qualified_name_is_the_plain_one_with_words_in_front():
    from xamt.triage.dedup import qualified, same_cause

    assert qualified("unsorted_segment_min", "min") and qualified("min", "segment_min")
    assert qualified("approx_top_k", "top_k")
    # inside a word, or a plain name too short to say anything, is no qualifier
    assert not qualified("argmin", "min") and not qualified("approx_top_k", "k")
    assert not qualified("cumsum", "cumsum") and not qualified("min_max", "max_min")
    # XLA's compiled tnp.min and tf.math.unsorted_segment_min, both on TensorFlow's front end
    seg = {"library": "tensorflow", "kernels": "xla", "name": "segment_min", "entry": "aa", "calls": ["aa"]}
    mn = {"library": "tensorflow", "kernels": "xla", "name": "min", "entry": "bb", "calls": ["bb"]}
    assert same_cause(seg, mn) and same_cause(mn, seg)
    # an API's own name counts beside its canonical one (tf.math.top_k is canonically "topk")
    top_k = {"library": "tensorflow", "kernels": "tensorflow", "name": "topk", "entry": "cc", "calls": ["cc"]}
    approx = {"library": "tensorflow", "kernels": "tensorflow", "name": "approx_max_k", "alias": "approx_top_k",
              "entry": "dd", "calls": ["dd"]}
    assert not same_cause(top_k, approx)
    assert same_cause({**top_k, "alias": "top_k"}, approx) and same_cause(approx, {**top_k, "alias": "top_k"})
    # not across kernels
    assert not same_cause({**seg, "kernels": "tensorflow"}, mn)
    # a distribution's method is held: the words in front of its canonical name are the
    # distribution, and its own name is every distribution's (campaign 42 folded JAX's compiled
    # gumbel_r.pdf into t.pdf by the own name "pdf")
    t_pdf = {"library": "jax", "kernels": "xla", "name": "t_pdf", "held": True, "entry": "ee", "calls": ["ee"]}
    gumbel = {**t_pdf, "name": "gumbel_r_pdf", "entry": "ff", "calls": ["ff"]}
    assert not same_cause(t_pdf, gumbel) and not same_cause({**t_pdf, "name": "pdf", "held": False}, gumbel)
    entropy = {"library": "scipy", "kernels": "scipy", "name": "entropy", "entry": None, "calls": []}
    assert not same_cause({**entropy, "name": "poisson_entropy", "held": True}, entropy)
    assert same_cause({**entropy, "name": "poisson_entropy"}, entropy)


def test_a_reference_no_majority_chose_stands_for_the_lineage_too():
    """TensorFlow's compiled approx_max_k was blamed against its eager form (two members, no
    majority); its eager approx_top_k, blamed later against JAX's, is the same eager top-k's NaN.
    The side the pivot rank chose is the lineage's ``either``, in either order of filing."""
    from xamt.triage.dedup import same_cause

    compiled = {"library": "tensorflow", "kernels": "xla", "name": "approx_max_k", "entry": "aa", "calls": ["aa"],
                "either": {"library": "tensorflow", "kernels": "tensorflow", "name": "approx_max_k"}}
    eager = {"library": "tensorflow", "kernels": "tensorflow", "name": "approx_max_k", "alias": "approx_top_k",
             "entry": "bb", "calls": ["bb"]}
    assert same_cause(compiled, eager) and same_cause(eager, compiled)
    # without it the two sit on different kernels
    bare = {k: v for k, v in compiled.items() if k != "either"}
    assert not same_cause(bare, eager) and not same_cause(eager, bare)
    # two ties relate through their own sides, never through both references alone
    tie = {"library": "tensorflow", "kernels": "xla", "name": "cumsum", "entry": "cc", "calls": ["cc"],
           "either": dict(compiled["either"])}
    assert not same_cause(compiled, tie) and not same_cause(tie, compiled)


def test_lineage_names_give_a_plain_function_its_own_name_and_a_distribution_method_none():
    from xamt.triage.dedup import lineage_names

    jax = NS(qualified_parents=("jax.scipy.stats",), namespaces=("jax.scipy.stats", "jax.scipy.stats.t"))
    tf = NS(qualified_parents=(), namespaces=("tensorflow", "tensorflow.math"))
    top_k = NS(library="tensorflow", qualname="tensorflow.math.top_k", canonical="topk", call="function")
    assert lineage_names(top_k, tf) == {"name": "topk", "alias": "top_k"}
    assert lineage_names(NS(library="tensorflow", qualname="tensorflow.sort", canonical="sort", call="function"),
                         tf) == {"name": "sort"}
    t_pdf = NS(library="jax", qualname="jax.scipy.stats.t.pdf", canonical="t_pdf", call="function")
    assert lineage_names(t_pdf, jax) == {"name": "t_pdf", "held": True}


def test_a_hang_and_a_refusal_of_one_api_are_one_failure():
    from xamt.triage.dedup import load_lineage, one_failure

    pairs = load_lineage().one_failure
    hang, refusal = ("crash", "timeout"), ("status", "ValueError: arange: cannot compute length")
    assert one_failure(hang, refusal, pairs) and one_failure(refusal, hang, pairs)
    # a segfault is not a hang; a value finding is not a refusal; nothing without pairs
    assert not one_failure(("crash", "crashed"), refusal, pairs)
    assert not one_failure(hang, ("value", "nan"), pairs)
    assert not one_failure(hang, refusal, ())
    # a wrong value at an integer extreme and a crash: one overflow (gcd's -1, lcm's SIGFPE)
    assert one_failure(("crash", "crashed"), ("value", "int-extreme"), pairs)
    assert not one_failure(("crash", "crashed"), ("value", "nan"), pairs)


def test_triggers_of_one_kin_are_akin():
    from xamt.triage.dedup import akin, load_lineage

    kin = load_lineage().trigger_kin
    assert akin("nan", "+inf", kin) and akin("-inf", "nan", kin) and akin("subnormal", "subnormal", kin)
    assert not akin("nan", "subnormal", kin) and not akin("nan", "+inf", ())
    # a refusal rule or a crash's status is only akin to itself
    assert not akin("timeout", "nan", kin)


def test_lineage_data_is_checked(tmp_path):
    from xamt.triage.dedup import load_lineage

    assert ("min", "max") in load_lineage().sibling_words
    bad = tmp_path / "triage.toml"
    bad.write_text('[lineage]\nsibling_words = [["min", "min"]]\n')
    with pytest.raises(DataFileError, match="sibling_words"):
        load_lineage(bad)
    bad.write_text('[lineage]\nsibling_words = []\n[lineage.trace]\njax = "eval_shape"\n')
    with pytest.raises(DataFileError, match="trace"):
        load_lineage(bad)
    for pairs in ('[["crash:timeout", "crash"]]', '[["crash", "bug"]]', '["crash", "status"]'):
        bad.write_text(f'[lineage]\none_failure = {pairs}\n')
        with pytest.raises(DataFileError, match="one_failure"):
            load_lineage(bad)
    for kin in ('[["nan"]]', '[["nan", "infinity"]]', '["nan", "+inf"]'):
        bad.write_text(f'[lineage]\ntrigger_kin = {kin}\n')
        with pytest.raises(DataFileError, match="trigger_kin"):
            load_lineage(bad)


def test_hangs_in_one_named_native_routine_share_a_family_and_dispatchers_name_none(tmp_path):
    from xamt.triage.dedup import load_lineage

    lineage = load_lineage()
    segv = {"package": "scipy", "python": False,
            "symbol": "xsf::specfun::Status xsf::specfun::segv<float>(int, int, float, int, float*, float*)"}
    # obl_ang1 and pro_rad1 both spin there: one family, one finding
    assert lineage.routine(segv) == f"native:scipy:{segv['symbol']}"
    assert lineage.routine({**segv, "symbol": "scipy_sbdsqr_"}) == "native:scipy:scipy_sbdsqr_"
    # XLA's thunks run any program, numpy's dispatch any ufunc: no routine of their own
    for generic in ("xla::cpu::SmallKernelThunk<4l, 1l>::Execute(xla::cpu::Thunk::ExecuteParams const&)",
                    "PyUFunc_DefaultLegacyInnerLoopSelector", "Eigen::ThreadPoolDevice::parallelFor"):
        assert lineage.routine({**segv, "symbol": generic}) is None, generic
    # a Python loop, a system library, a stripped object, nothing sampled
    assert lineage.routine({**segv, "python": True}) is None
    assert lineage.routine({**segv, "package": None}) is None
    assert lineage.routine({**segv, "symbol": None}) is None and lineage.routine(None) is None
    bad = tmp_path / "triage.toml"
    bad.write_text('[lineage]\ndispatch_symbols = ["(unclosed"]\n')
    with pytest.raises(DataFileError, match="dispatch_symbols"):
        load_lineage(bad)
