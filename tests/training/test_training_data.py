"""The training mixture: seeded, never test items, substitutions named, rows in the reward's shape."""

from __future__ import annotations

import pytest
from installed import needs
from training_fixtures import data_files

from solvers.conducting import Settings, conductor_messages
from tasks.sources import FileSource, LoadedRecords, SourceError
from training.data import (
    build_items,
    build_rows,
    default_loaders,
    interleave_domains,
    mmlu_items,
    parse_counts,
    parse_substitutes,
)

pytestmark = needs("datasets")


def loaded(path: str) -> LoadedRecords:
    src = FileSource(path)
    return LoadedRecords(src.load(), src)


@pytest.fixture
def files(tmp_path):
    return data_files(tmp_path, n_math=60, n_mmlu=50)


def items_for(files, mixture="math=5,mmlu=5,rlpr=5,lcb=5", substitute="rlpr=math,lcb=mmlu", seed=0):
    loaders = default_loaders({"math": files["math_file"], "mmlu": files["mmlu_file"]})
    return build_items(mixture, substitute, seed, loaders, lambda: loaded(files["math500_file"]))


def test_mixture_counts_substitution_and_seed(files):
    items, prov = items_for(files)
    assert len(items) == 20
    assert sum(i.domain == "math" for i in items) == 10 and sum(i.domain == "mmlu" for i in items) == 10
    assert prov["substituted"] == {
        "rlpr": {"by": "math", "count": 5, "reason": "no offline source"},
        "lcb": {"by": "mmlu", "count": 5, "reason": "no offline source"},
    }
    assert prov["sources"]["math"]["source"].startswith("file:")
    again, _ = items_for(files)
    other, _ = items_for(files, seed=1)
    assert [i.item_id for i in again] == [i.item_id for i in items]
    assert [i.item_id for i in other] != [i.item_id for i in items]


def test_missing_domain_without_substitute_is_an_error_naming_the_fix(files):
    with pytest.raises(SourceError, match="--rlpr_file"):
        items_for(files, mixture="math=2,rlpr=2", substitute="")


def test_math500_problems_are_never_training_items(files):
    items, prov = items_for(files, mixture="math=59", substitute="")
    questions = {i.question.split("\n")[0] for i in items}
    assert "What is 0 plus 1?" not in questions  # the fixture's MATH-500 problem
    assert prov["sources"]["math"]["available"] == 59
    with pytest.raises(ValueError, match="59 usable"):
        items_for(files, mixture="math=60", substitute="")


def test_math_items_carry_boxed_answer_and_eval_prompt(files):
    items, _ = items_for(files, mixture="math=3", substitute="")
    for item in items:
        n = int(item.question.split()[2])
        assert item.target == str(2 * n + 1) and item.check == "math" and item.choices is None
        assert "ANSWER:" in item.question  # the math task's own instruction


def test_mmlu_uses_only_the_train_part_of_the_split(files):
    train = mmlu_items(loaded(files["mmlu_file"]))
    assert len(train) == 50 * 3 // 5
    assert all(i.check == "choice" and len(i.choices) == 4 and i.target in "ABCD" for i in train)


def test_rows_have_reward_columns_and_the_solver_prompt(files):
    items, _ = items_for(files, mixture="math=4,mmlu=4", substitute="")
    descriptions = ["worker zero", "worker one", "worker two", "worker three"]
    settings = Settings(few_shot="none")
    rows = build_rows(items, descriptions, settings, pool_size=2, seed=3)
    for row, item in zip(rows, items, strict=True):
        assert set(row) >= {"question", "target", "check", "choices", "pool_indices", "domain", "item_id", "prompt"}
        assert len(row["pool_indices"]) == 2 and row["pool_indices"] == sorted(set(row["pool_indices"]))
        listed = [descriptions[i] for i in row["pool_indices"]]
        assert row["prompt"] == [
            {"role": "user", "content": conductor_messages(item.question, listed, settings)[0].text}
        ]
    assert len({tuple(r["pool_indices"]) for r in rows}) > 1  # subsets vary per row
    whole = build_rows(items[:1], descriptions, settings)
    assert whole[0]["pool_indices"] == [0, 1, 2, 3]


def test_recursion_offers_the_conductor_as_the_next_model(files):
    items, _ = items_for(files, mixture="math=1", substitute="")
    row = build_rows(items, ["a", "b"], Settings(few_shot="none", max_depth=1))[0]
    assert (
        row["prompt"][0]["content"]
        == conductor_messages(items[0].question, ["a", "b"], Settings(few_shot="none", max_depth=1), self_id=2)[0].text
    )


@pytest.mark.parametrize("text", ["math", "math=x", "bio=3", "math=0"])
def test_bad_mixture(text):
    with pytest.raises(ValueError, match="mixture"):
        parse_counts(text)


def test_bad_substitute():
    assert parse_substitutes("rlpr=math, lcb=mmlu") == {"rlpr": "math", "lcb": "mmlu"}
    with pytest.raises(ValueError, match="substitute"):
        parse_substitutes("rlpr=rlpr")


FIXTURES = __import__("pathlib").Path(__file__).parents[1] / "fixtures"


def test_rlpr_and_lcb_from_files_register_lcb_problems(files):
    from scorers.code_lcb import lookup_problem

    loaders = default_loaders(
        {**{"math": files["math_file"], "mmlu": files["mmlu_file"]},
         "rlpr": str(FIXTURES / "rlpr_sample.jsonl"), "lcb": str(FIXTURES / "lcb_sample.jsonl")}
    )  # fmt: skip
    items, prov = build_items("rlpr=2,lcb=4", "", 0, loaders, lambda: loaded(files["math500_file"]))
    assert prov["substituted"] == {} and {"rlpr", "lcb"} <= set(prov["sources"])
    lcb = [i for i in items if i.domain == "lcb"]
    assert len(lcb) == 4 and all(i.check == "lcb" and i.target == i.item_id for i in lcb)
    assert all(lookup_problem(i.item_id).question_id == i.item_id for i in lcb)  # tests found by id
    rlpr_rows = [i for i in items if i.domain == "rlpr"]
    assert all(i.check == "math" and i.target for i in rlpr_rows)


def test_interleave_domains_takes_turns_and_keeps_each_domains_order(files):
    items, _ = items_for(files, mixture="math=6,mmlu=3", substitute="")
    mixed = interleave_domains(items)
    assert sorted(i.item_id for i in mixed) == sorted(i.item_id for i in items)
    first = items[0].domain
    other = "mmlu" if first == "math" else "math"
    assert [i.domain for i in mixed[:6]] == [first, other] * 3  # turns while both last
    for domain in ("math", "mmlu"):
        assert [i for i in mixed if i.domain == domain] == [i for i in items if i.domain == domain]
    assert interleave_domains([]) == []
