"""The role-aware input model shared by group validation and fuzzing.

* :class:`GroupInput` / :class:`SlotValue` — one regenerable value per slot (:mod:`.model`);
* :func:`seed_inputs` — the canonical ordinary input(s) of a group (:mod:`.seed`), from
  ``xamt/data/canonical_inputs.toml`` (:mod:`.rules`) and named structures (:mod:`.structured`);
* :func:`mutate` — one fuzzing mutation of an input, per slot role (:mod:`.mutate`);
* :func:`materialise` — the concrete numpy / Python values of an input (:mod:`.materialise`).
"""
from xamt.inputs.materialise import materialise
from xamt.inputs.model import GroupInput, SlotValue
from xamt.inputs.mutate import MUTATION_OPS, mutate
from xamt.inputs.rules import InputRules, SlotSpec, load_input_rules
from xamt.inputs.seed import SeedPlan, seed_inputs, seed_plan, variant_inputs

__all__ = [
    "GroupInput", "SlotValue", "seed_inputs", "seed_plan", "variant_inputs", "SeedPlan", "mutate",
    "MUTATION_OPS", "materialise", "InputRules", "SlotSpec", "load_input_rules",
]
