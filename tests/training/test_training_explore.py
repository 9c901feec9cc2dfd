"""Exploring groups (training/explore.py): assigned first workers, every worker in every group, free
rows untouched, options refused where they cannot work, assigned rollouts kept out of the routing curves."""

from __future__ import annotations

import pytest
from installed import Deferred, needs

pytestmark = needs("torch", "transformers")
torch = Deferred("torch")
explore = Deferred("training.explore")  # imports torch and transformers

DIGITS = [10, 11, 12, 13]  # the tokens of worker ids "0".."3" in these tests


def grouped_rows(groups: int = 2, generations: int = 8) -> torch.Tensor:
    """`groups` distinct prompts, each repeated `generations` times in a row, as TRL batches them."""
    return torch.cat([torch.full((generations, 5), g + 1) for g in range(groups)])


def test_each_group_assigns_every_worker_once_and_leaves_the_rest_free():
    generator = torch.Generator().manual_seed(0)
    assigned = explore.group_assignments(grouped_rows(), explore=4, n_workers=4, generator=generator)
    for group in (assigned[:8], assigned[8:]):
        assert sorted(group[:4]) == [0, 1, 2, 3]
        assert group[4:] == [None] * 4


def test_more_assigned_rows_than_workers_cycle_the_permutation():
    generator = torch.Generator().manual_seed(3)
    assigned = explore.group_assignments(grouped_rows(1), explore=6, n_workers=4, generator=generator)
    assert sorted(assigned[:4]) == [0, 1, 2, 3] and assigned[4:6] == assigned[:2] and assigned[6:] == [None, None]


def scores_with_digit_mass(rows: int, digit_logit: float) -> torch.Tensor:
    scores = torch.zeros(rows, 20)
    scores[:, DIGITS] = digit_logit
    return scores


def test_a_row_is_forced_only_where_the_model_writes_a_worker_id():
    forcing = explore.FirstWorker([2, None, 1], DIGITS)
    prompt = torch.ones(3, 4, dtype=torch.long)
    not_yet = forcing(prompt, scores_with_digit_mass(3, -5.0))  # a word comes next: nothing forced
    assert torch.isfinite(not_yet).all()
    decided = forcing(prompt, scores_with_digit_mass(3, 5.0))
    assert decided[0].argmax() == DIGITS[2] and torch.isinf(decided[0]).sum() == 19
    assert torch.isfinite(decided[1]).all()  # a free row samples as it would
    assert decided[2].argmax() == DIGITS[1]


def test_a_forced_row_keeps_the_policys_own_choice_over_the_worker_ids():
    forcing = explore.FirstWorker([2, None], DIGITS)
    scores = scores_with_digit_mass(2, 5.0)
    scores[:, DIGITS[0]] = 5.0 + torch.log(torch.tensor(3.0))  # worker 0 three times as likely as each other one
    forcing(torch.ones(2, 4, dtype=torch.long), scores)
    given, free = forcing.assignments()
    assert given.worker == 2 and given.policy == pytest.approx((0.5, 1 / 6, 1 / 6, 1 / 6))
    assert free is None


def test_a_row_that_wrote_its_first_worker_is_not_forced_again():
    forcing = explore.FirstWorker([3], DIGITS)
    forcing(torch.ones(1, 4, dtype=torch.long), scores_with_digit_mass(1, 5.0))
    later = forcing(torch.tensor([[1, 1, 1, 1, DIGITS[3], 5]]), scores_with_digit_mass(1, 5.0))
    assert torch.isfinite(later).all()  # "model_id = [3" after the line is the model's own copy


def test_a_greedy_prefix_takes_the_likeliest_token_before_the_worker_id_on_assigned_rows_only():
    forcing = explore.FirstWorker([2, None], DIGITS, greedy_prefix=True)
    scores = scores_with_digit_mass(2, -5.0)
    scores[:, 7] = 3.0  # the likeliest word
    scores[:, 8] = 2.9
    words = forcing(torch.ones(2, 4, dtype=torch.long), scores.clone())
    assert words[0].argmax() == 7 and torch.isinf(words[0]).sum() == 19
    assert torch.isfinite(words[1]).all()  # a free row samples as it would
    decided = forcing(torch.tensor([[1, 1, 1, 1, 7], [1, 1, 1, 1, 8]]), scores_with_digit_mass(2, 5.0))
    assert decided[0].argmax() == DIGITS[2] and torch.isinf(decided[0]).sum() == 19  # then its worker
    after = forcing(torch.tensor([[1, 1, 1, 1, 7, DIGITS[2]]] * 2), scores.clone())
    assert torch.isfinite(after).all()  # past its worker id a row samples freely again


def test_a_sampled_prefix_is_left_to_the_sampler():
    forcing = explore.FirstWorker([2], DIGITS)
    scores = scores_with_digit_mass(1, -5.0)
    assert torch.isfinite(forcing(torch.ones(1, 4, dtype=torch.long), scores)).all()


class DigitTokenizer:
    def __call__(self, text: str, add_special_tokens: bool = False):
        return type("Encoded", (), {"input_ids": [DIGITS[int(text)]]})()


def tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=30, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                         pad_token_id=0, eos_token_id=1, bos_token_id=None)  # fmt: skip
    torch.manual_seed(0)
    return LlamaForCausalLM(config).eval()


class DigitsAtThirdToken:
    """A stand-in for a warm-up model: its third completion token is a digit, no earlier one is."""

    def __init__(self, prompt_len: int):
        self.prompt_len = prompt_len

    def __call__(self, input_ids, scores):
        written = input_ids.size(1) - self.prompt_len
        if written < 2:
            scores[:, DIGITS] = float("-inf")
        elif written == 2:
            scores[:, DIGITS] += 50.0
        return scores


def generate_exploring(explore_rows: int, stand_in: type = DigitsAtThirdToken, **options):
    """Two groups of 8 equal rows through a tiny model with exploring groups; (prompt, output, the
    assignments)."""
    from transformers import GenerationConfig, LogitsProcessorList

    model = tiny_llama()
    last_assigned = explore.assign_first_workers(model, DigitTokenizer(), explore=explore_rows, n_workers=4, seed=0,
                                                 **options)  # fmt: skip
    ids = grouped_rows(2, 8)
    config = GenerationConfig(max_new_tokens=4, do_sample=True, temperature=1.0, top_k=0, pad_token_id=0,
                              eos_token_id=1)  # fmt: skip
    torch.manual_seed(7)
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config,
                         logits_processor=LogitsProcessorList([stand_in(ids.size(1))]))  # fmt: skip
    return ids, out, last_assigned()


def test_generate_gives_assigned_rows_their_worker_and_reports_the_assignment():
    ids, out, assigned = generate_exploring(4)
    third = out[:, ids.size(1) + 2].tolist()
    for row, given in enumerate(assigned):
        if given is not None:
            assert third[row] == DIGITS[given.worker]
            assert len(given.policy) == 4 and sum(given.policy) == pytest.approx(1.0)
    for group in (slice(0, 8), slice(8, 16)):
        assert {third[r] for r in range(16)[group] if assigned[r] is not None} == set(DIGITS)


class WordsThenDigits(DigitsAtThirdToken):
    """As DigitsAtThirdToken, with near-even odds over the words before the digit (token 7 a little
    likelier), so sampled rows differ there."""

    def __call__(self, input_ids, scores):
        if input_ids.size(1) - self.prompt_len < 2:
            scores[:] = 0.0
            scores[:, 7] = 0.5
        return super().__call__(input_ids, scores)


def test_with_a_greedy_prefix_every_row_of_a_group_writes_the_same_text_before_its_worker():
    ids, out, _ = generate_exploring(8, WordsThenDigits, prefix="greedy")
    assert (out[:, ids.size(1) : ids.size(1) + 2] == 7).all()  # the likeliest word, on every row of both groups
    _, sampled, _ = generate_exploring(8, WordsThenDigits)  # the control: sampled, rows differ before the worker
    assert not (sampled[:8, ids.size(1) : ids.size(1) + 2] == sampled[0, ids.size(1) : ids.size(1) + 2]).all()


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"prefix": "shared"}, "sampled, greedy"),
        ({"explore": 0, "prefix": "greedy"}, "set explore_workers > 0"),
        ({"explore": 9}, "0..num_generations"),
        ({"explore": -1}, "0..num_generations"),
        ({"n_workers": 11}, "one-digit"),
        ({"use_vllm": True}, "use_vllm false"),
        ({"max_depth": 1}, "recursion"),
    ],
)
def test_settings_that_cannot_explore_are_refused_with_the_fix(kwargs, words):
    options = {"explore": 4, "num_generations": 8, "n_workers": 4, "use_vllm": False, "max_depth": 0, **kwargs}
    with pytest.raises(ValueError, match=words):
        explore.check_explore(**options)


def test_off_is_accepted_whatever_the_rest():
    explore.check_explore(0, 8, 40, True, 1)


def test_assigned_rollouts_are_left_out_of_the_routing_shares():
    pd = pytest.importorskip("pandas")
    from reports.plots import domain_worker_shares

    rows = pd.DataFrame(
        {
            "step": [1, 1, 1, 1],
            "domain": ["math"] * 4,
            "worker_names": [["a"], ["a"], ["b"], ["c"]],
            "assigned": [None, None, 1, 2],
        }
    )
    shares = domain_worker_shares(rows)
    assert shares.loc[0, "a"] == 1.0 and "b" not in shares and "c" not in shares


def test_assigned_rollouts_count_as_the_policys_own_probabilities_in_the_routing_shares():
    pd = pytest.importorskip("pandas")
    from reports.plots import domain_worker_shares

    rows = pd.DataFrame(
        {
            "step": [1, 1, 1],
            "domain": ["math"] * 3,
            "worker_names": [["a", "a"], ["b"], ["c"]],
            "assigned": [None, 1, 2],
            "first_worker_policy": [None, {"a": 0.5, "b": 0.5}, {"a": 1.0, "b": 0.0}],
        }
    )
    shares = domain_worker_shares(rows).set_index(["step", "domain"])
    assert shares.loc[(1, "math"), "a"] == pytest.approx(3.5 / 4)  # two free steps + 0.5 + 1.0, of 4 units
    assert shares.loc[(1, "math"), "b"] == pytest.approx(0.5 / 4) and "c" not in shares


def test_the_logged_policy_names_each_listed_worker_by_its_pool_name():
    from types import SimpleNamespace

    from training.rewards import ConductorReward

    reward = SimpleNamespace(pool_names=["w0", "w1", "w2"])
    record = {"pool_indices": [2, 0]}  # the prompt lists pool worker 2 as "0", pool worker 0 as "1"
    assert ConductorReward.policy_by_name(reward, (0.25, 0.75), record) == {"w2": 0.25, "w0": 0.75}
    assert ConductorReward.policy_by_name(reward, None, record) is None
