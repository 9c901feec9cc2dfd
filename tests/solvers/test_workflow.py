"""The workflow language: accepted forms, named rejections, and no code ever runs."""

import ast
import builtins

import pytest
from cpu_clock import cpu_seconds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solvers.workflow as workflow_module
from solvers.workflow import (
    MAX_COMPLETION_CHARS,
    Reason,
    Workflow,
    paper_reward,
    parse_workflow,
)

POOL = range(3)


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The text of every parse the workflow parser makes (it parses through safe_parse)."""
    seen: list[str] = []
    real = workflow_module.safe_parse

    def counted(source: str, *args, **kwargs):
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(workflow_module, "safe_parse", counted)
    return seen


def lists(model_id: str, subtasks: str, access: str) -> str:
    return f"model_id = {model_id}\nsubtasks = {subtasks}\naccess_list = {access}\n"


def test_plain_lists_after_reasoning():
    text = "Two workers should do it.\n" + lists("[1, 0]", '["Solve.", "Check."]', '[[], "all"]')
    result = parse_workflow(text, POOL)
    assert result.ok and result.error is None
    assert result.workflow == Workflow((1, 0), ("Solve.", "Check."), ((), "all"))
    assert result.workflow.visible(1) == (0,)


def test_python_fence_and_multiline_lists():
    text = """Reasoning first.
```python
model_id = [
    0,
    2,
]
subtasks = ["Draft an answer.",
            "Improve it."]
access_list = [[], [0]]
```
Done."""
    result = parse_workflow(text, POOL, access="indices")
    assert result.workflow.model_ids == (0, 2)
    assert result.workflow.access == ((), (0,))


def test_last_assignment_of_each_name_wins():
    text = lists("[0]", '["a"]', "[[]]") + "On second thought:\n" + lists("[1, 2]", '["b", "c"]', '[[], "all"]')
    assert parse_workflow(text, POOL).workflow.model_ids == (1, 2)


@pytest.mark.parametrize("entry", ['"Model 2"', '"model 2"', '"2"', "2"])
def test_worker_names_in_several_spellings(entry):
    result = parse_workflow(lists(f"[{entry}]", '["a"]', "[[]]"), POOL)
    assert result.workflow.model_ids == (2,)


def test_all_is_every_earlier_step_and_indices_are_deduplicated():
    text = lists("[0, 1, 2]", '["a", "b", "c"]', '["ALL", [0], [1, 0, 1]]')
    workflow = parse_workflow(text, POOL, access="indices").workflow
    assert [workflow.visible(i) for i in range(3)] == [(), (0,), (0, 1)]


def test_tuples_are_accepted_as_lists():
    text = lists("(0, 1)", '("a", "b")', "((), (0,))")
    assert parse_workflow(text, POOL, access="indices").workflow.access == ((), (0,))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I refuse to write lists.", Reason.MISSING_LIST),
        ("model_id = [0]\nsubtasks = ['a']", Reason.MISSING_LIST),
        (lists("[0", '["a"]', "[[]]"), Reason.NOT_LITERAL),
        (lists("[0, 1]", '["a"]', "[[], []]"), Reason.UNEQUAL_LENGTHS),
        (lists("[]", "[]", "[]"), Reason.EMPTY_WORKFLOW),
        (lists("[0] * 6", '["a"] * 6', "[[]] * 6"), Reason.NOT_LITERAL),
        (lists(str([0] * 6), str(["a"] * 6), str([[]] * 6)), Reason.TOO_MANY_STEPS),
        (lists("0", '["a"]', "[[]]"), Reason.NOT_A_LIST),
        (lists("[3]", '["a"]', "[[]]"), Reason.UNKNOWN_WORKER),
        (lists("[-1]", '["a"]', "[[]]"), Reason.UNKNOWN_WORKER),
        (lists('["GPT-5"]', '["a"]', "[[]]"), Reason.BAD_MODEL_ID),
        (lists("[True]", '["a"]', "[[]]"), Reason.BAD_MODEL_ID),
        (lists("[1.0]", '["a"]', "[[]]"), Reason.BAD_MODEL_ID),
        (lists("[0]", "[42]", "[[]]"), Reason.BAD_SUBTASK),
        (lists("[0]", '["   "]', "[[]]"), Reason.BAD_SUBTASK),
        (lists("[0]", '["a"]', '["some"]'), Reason.BAD_ACCESS),
        (lists("[0]", '["a"]', "[0]"), Reason.BAD_ACCESS),
        (lists("[0]", '["a"]', "[[True]]"), Reason.BAD_ACCESS),
        (lists("[0]", '["a"]', "[[0]]"), Reason.ACCESS_NOT_EARLIER),
        (lists("[0, 1]", '["a", "b"]', "[[], [1]]"), Reason.ACCESS_NOT_EARLIER),
        (lists("[0, 1]", '["a", "b"]', "[[], [-1]]"), Reason.ACCESS_NOT_EARLIER),
        ("x" * (MAX_COMPLETION_CHARS + 1), Reason.TOO_LONG),
    ],
)
def test_rejections_are_named(text, reason):
    result = parse_workflow(text, POOL, access="indices")
    assert not result.ok
    assert result.error.reason is reason
    assert result.reason == reason.value
    assert result.error.message


def test_empty_lists_allowed_only_when_asked():
    text = lists("[]", "[]", "[]")
    assert parse_workflow(text, POOL, allow_empty=True).workflow.keeps_answer
    assert parse_workflow(text, POOL).reason == "empty_workflow"


def test_max_steps_is_configurable():
    text = lists("[0, 1, 2]", '["a", "b", "c"]', "[[], [], []]")
    assert parse_workflow(text, POOL, max_steps=2).reason == "too_many_steps"
    assert parse_workflow(text, POOL, max_steps=3).ok


def test_rejection_message_names_the_offered_workers():
    result = parse_workflow(lists("[7]", '["a"]', "[[]]"), POOL)
    assert "offered: 0, 1, 2" in result.error.message


HOSTILE = [
    "__import__('os').system('touch /tmp/pwned')",
    "open('/etc/passwd').read()",
    "exec('import os')",
    "(lambda: 1)()",
    "[x for x in range(10**9)]",
    "globals()",
]


@pytest.fixture
def no_code_runs(monkeypatch):
    """Record any call of eval/exec/open, or of compile beyond building an AST."""
    calls = []
    for name in ("eval", "exec", "open"):
        original = getattr(builtins, name)

        def spy(*args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(builtins, name, spy)
    real_compile = builtins.compile

    def spy_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST:
            calls.append("compile")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", spy_compile)
    return calls


@pytest.mark.parametrize("expression", HOSTILE)
def test_hostile_expressions_are_rejected_not_run(expression, tmp_path, no_code_runs):
    marker = tmp_path / "pwned"
    expression = expression.replace("/tmp/pwned", str(marker))
    for text in (
        lists(f"[{expression}]", '["a"]', "[[]]"),
        lists("[0]", f"[{expression}]", "[[]]"),
        lists("[0]", '["a"]', f"[{expression}]"),
        lists(expression, '["a"]', "[[]]"),
    ):
        result = parse_workflow(text, POOL)
        assert result.reason == "not_literal", text
    assert not marker.exists()
    assert no_code_runs == []


def test_os_system_in_list_does_not_execute(tmp_path):
    marker = tmp_path / "ran"
    text = lists(f"[__import__('os').system('touch {marker}')]", '["a"]', "[[]]")
    assert parse_workflow(text, POOL).reason == "not_literal"
    assert not marker.exists()


def test_deeply_nested_input_is_rejected_not_crashing():
    text = lists("[" * 5000 + "]" * 5000, '["a"]', "[[]]")
    assert not parse_workflow(text, POOL).ok


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_fuzz_arbitrary_text_never_raises(text):
    result = parse_workflow(text, POOL)
    assert result.ok != (result.error is not None)


ATOMS = st.one_of(
    st.integers(-3, 8),
    st.sampled_from(['"all"', '"Model 1"', "[]", "[0]", "[0, 1]", '"x"', "None", "1.5", "True"]),
    st.sampled_from(["__import__('os')", "print(1)", "a.b", "f()", "*x", "{1: 2}", "{1}"]),
    st.text(alphabet="[]()'\",:= 0123456789allModel", max_size=12),
)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(ATOMS.map(str), max_size=7),
    st.lists(ATOMS.map(str), max_size=7),
    st.lists(ATOMS.map(str), max_size=7),
    st.booleans(),
)
def test_fuzz_list_shaped_completions(ids, subtasks, access, fenced):
    text = lists(f"[{', '.join(ids)}]", f"[{', '.join(subtasks)}]", f"[{', '.join(access)}]")
    if fenced:
        text = f"Plan:\n```python\n{text}```\n"
    result = parse_workflow(text, POOL)
    if result.ok:
        workflow = result.workflow
        assert 1 <= len(workflow) <= 5
        assert all(w in POOL for w in workflow.model_ids)
        for i in range(len(workflow)):
            assert all(0 <= j < i for j in workflow.visible(i))
        # a valid workflow round-trips through its dict form
        again = parse_workflow(lists(*(repr(v) for v in workflow.to_dict().values())), POOL)
        assert again.workflow == workflow
    else:
        assert isinstance(result.reason, str)


def test_parser_uses_no_eval_or_exec():
    source = open(parse_workflow.__code__.co_filename).read()
    names = {
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not names & {"eval", "exec", "compile", "__import__"}


@pytest.mark.parametrize(
    ("parsed", "correct", "reward"), [(False, False, 0.0), (False, True, 0.0), (True, False, 0.5), (True, True, 1.0)]
)
def test_paper_reward(parsed, correct, reward):
    assert paper_reward(parsed, correct) == reward


# ---------------------------------------------------------------- the paper's format

FIGURE_2 = """The question asks for a proof-style computation, so one model should solve it and a
second, stronger model should check every step and give the final answer. I will restate the
problem for the checker only through the history it sees.

model_id = [3, 1]
subtasks = ["Solve the problem step by step.", "Verify the solution above and state the final answer."]
access_list = [[], ["all"]]
"""


def test_paper_figure_2_style_completion_parses():
    result = parse_workflow(FIGURE_2, range(7))
    assert result.ok, result.error
    assert result.workflow.access == ((), "all")
    assert result.workflow.visible(1) == (0,)
    assert result.workflow.to_dict()["access_list"] == [[], ["all"]]


@pytest.mark.parametrize("entry", ['["all"]', '"all"', '["ALL"]', '"All"', "('all',)", '[" all "]'])
def test_all_in_every_spelling_means_every_earlier_step(entry):
    result = parse_workflow(lists("[0, 1, 2]", '["a", "b", "c"]', f"[[], [], {entry}]"), POOL)
    assert result.workflow.visible(2) == (0, 1)


def test_binary_scheme_rejects_indices_by_name():
    text = lists("[0, 1]", '["a", "b"]', "[[], [0]]")
    result = parse_workflow(text, POOL)
    assert result.reason == "indices_access"
    assert "-S access=indices" in result.error.message
    assert parse_workflow(text, POOL, access="indices").workflow.visible(1) == (0,)


@pytest.mark.parametrize("entry", ['["all", 0]', '["some"]', '[["all"]]', "None"])
def test_malformed_access_is_bad_access_in_both_schemes(entry):
    text = lists("[0, 1]", '["a", "b"]', f"[[], {entry}]")
    assert parse_workflow(text, POOL).reason == "bad_access"
    assert parse_workflow(text, POOL, access="indices").reason == "bad_access"


# ---------------------------------------------------------------- hardening (issue 13)


@pytest.mark.parametrize(
    "model_id", ["[0x" + "f" * 5000 + "]", "[" + "9" * 5000 + "]", "[1e999]", "[" + "9" * 4000 + "]"]
)
def test_huge_numbers_are_named_rejections(model_id):
    result = parse_workflow(lists(model_id, '["a"]', "[[]]"), POOL)
    assert not result.ok and result.reason in ("bad_model_id", "unknown_worker", "not_literal")
    assert len(result.error.message) < 300


def test_huge_number_in_access_is_a_named_rejection():
    result = parse_workflow(lists("[0, 1]", '["a", "b"]', "[[], [0x" + "f" * 5000 + "]]"), POOL, access="indices")
    assert result.reason == "access_not_earlier"


@pytest.mark.parametrize(
    "text",
    [
        "x" * MAX_COMPLETION_CHARS,
        "model_id = [\n" * (MAX_COMPLETION_CHARS // 13),
        ("model_id = [0]\n" + "(" * 100 + "\n") * (MAX_COMPLETION_CHARS // 116),
        'model_id = ["' + "a" * (MAX_COMPLETION_CHARS - 20) + '"]',
        ("subtasks = 1 +\n" * (MAX_COMPLETION_CHARS // 16)),
        '"""\n' + lists("[0]", '["a"]', "[[]]") * (MAX_COMPLETION_CHARS // 60),
    ],
    ids=["prose", "open-brackets", "parens", "long-string", "broken-lines", "triple-quotes"],
)
def test_adversarial_completions_are_decided_in_bounded_time(text, parses):
    """At most _MAX_BLOCKS runs of _MAX_TRIMS parses each, and CPU time (not wall time: a busy
    machine cannot fail it) far under a second; the slowest case takes about 25 ms."""
    assert len(text) <= MAX_COMPLETION_CHARS
    result, cpu = cpu_seconds(lambda: parse_workflow(text, POOL))
    assert result.ok != (result.error is not None)
    assert len(parses) <= workflow_module._MAX_BLOCKS * workflow_module._MAX_TRIMS
    assert cpu < 0.5, f"{cpu:.2f} s of CPU"


def test_over_long_completion_is_rejected_at_once(parses):
    result = parse_workflow("model_id = [0]\n" * 10_000, POOL)
    assert result.reason == "too_long" and parses == []  # rejected before any parse


def test_assignment_inside_a_string_literal_is_not_the_workflow():
    hidden = 'note = """\n' + lists("[2]", '["hidden"]', "[[]]") + '"""\n'
    assert parse_workflow(hidden, POOL).reason == "missing_list"
    real_after = hidden + lists("[1]", '["real"]', "[[]]")
    assert parse_workflow(real_after, POOL).workflow.subtasks == ("real",)
    inside_value = (
        'model_id = [1]\nsubtasks = ["""real\n' + lists("[2]", '["x"]', "[[]]") + '"""]\naccess_list = [[]]\n'
    )
    assert parse_workflow(inside_value, POOL).workflow.model_ids == (1,)


def test_indented_or_nested_assignments_do_not_count():
    nested = "if True:\n    " + lists("[0]", '["a"]', "[[]]").replace("\n", "\n    ")
    assert parse_workflow(nested, POOL).reason == "missing_list"
    nested_def = "def f():\n" + "".join(f"    {line}\n" for line in lists("[0]", '["a"]', "[[]]").splitlines())
    assert parse_workflow(nested_def, POOL).reason == "missing_list"


def test_prose_after_the_lists_is_ignored():
    text = lists("[0]", '["a"]', "[[]]") + "This plan is short because the task is easy.\n"
    assert parse_workflow(text, POOL).ok
