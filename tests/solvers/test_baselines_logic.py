"""Pure logic of the baselines: voting, Smoothie's fit, random workflows, embedding sources."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from solvers.consensus import auto_check, majority, read_answer
from solvers.moa import aggregate_prompt, draw_aggregator
from solvers.random_workflow import random_workflow
from solvers.reflection import conversation, unchanged
from solvers.smoothie import fit
from solvers.workflow import parse_workflow
from workers.embeddings import EmbeddingError, HashedBagOfWords, OpenAICompatible, embedding_source

# ---------------------------------------------------------------- consensus


def test_majority_counts_equivalent_math_answers_as_one_vote():
    outputs = ["ANSWER: 1/2", "ANSWER: 3", "ANSWER: 0.5", "ANSWER: \\frac{1}{2}", "ANSWER: 3"]
    vote = majority(outputs, "math")
    assert vote.groups == [[0, 2, 3], [1, 4]]
    assert vote.chosen == 0 and not vote.tie


def test_majority_tie_goes_to_the_answer_given_first():
    vote = majority(["ANSWER: B", "ANSWER: A", "ANSWER: A", "ANSWER: B"], "choice")
    assert vote.groups == [[0, 3], [1, 2]] and vote.tie and vote.chosen == 0
    flipped = majority(["ANSWER: A", "ANSWER: B", "ANSWER: B", "ANSWER: A"], "choice")
    assert flipped.chosen == 0 and flipped.answers[0] == "A"


def test_majority_ignores_failed_and_unreadable_outputs():
    vote = majority([None, "no idea", "ANSWER: 7", "The final answer is 7.0", "ANSWER: 8"], "numeric")
    assert vote.answers[:2] == [None, None]
    assert vote.groups == [[2, 3], [4]] and vote.chosen == 2


def test_majority_without_any_vote_keeps_the_first_output():
    assert majority([None, "hmm", "no"], "numeric").chosen == 1
    assert majority([None, None], "math").chosen is None


def test_numeric_votes_differ_where_math_would_merge():
    # numeric compares the stated numbers exactly: 0.5 and 1/2 are the same number
    assert majority(["ANSWER: 0.5", "ANSWER: 1/2"], "numeric").groups == [[0, 1]]
    assert majority(["ANSWER: 12", "ANSWER: 13"], "numeric").groups == [[0], [1]]


def test_text_check_collapses_whitespace_only():
    vote = majority(["ANSWER: def f():  return 1", "ANSWER: def f(): return 1", "ANSWER: def g(): return 1"], "text")
    assert vote.groups == [[0, 1], [2]]


def test_unknown_check_kind_is_refused():
    with pytest.raises(ValueError, match="unknown check kind"):
        majority(["x"], "fuzzy")


def test_auto_check_follows_the_sample_and_task():
    assert auto_check("gsm8k", 0, None) == "numeric"
    assert auto_check("pkg/math500", 0, None) == "math"
    assert auto_check("anything", 4, None) == "choice"
    assert auto_check("humaneval", 0, "code") == "text"
    assert auto_check(None, 0, None) == "math"
    assert read_answer("ANSWER: E", "choice", "ABCDE") == "E"


# ---------------------------------------------------------------- self-reflection


def test_reflection_conversation_keeps_every_attempt():
    turns = conversation("Q?", ["first", "second"])
    assert [r for r, _ in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[0] == ("user", "Q?") and turns[1][1] == "first" and turns[3][1] == "second"


def test_reflection_stops_only_on_the_same_answer():
    assert unchanged("ANSWER: 1/2", "after checking, ANSWER: 0.5", "math")
    assert not unchanged("ANSWER: 1/2", "ANSWER: 2", "math")
    assert not unchanged("no answer", "no answer", "math")


# ---------------------------------------------------------------- mixture of agents


def test_aggregator_draw_is_seeded_per_sample():
    draws = [draw_aggregator(7, 0, f"q{i}/1") for i in range(40)]
    assert draws == [draw_aggregator(7, 0, f"q{i}/1") for i in range(40)]
    assert set(draws) == set(range(7))  # every member gets drawn over 40 samples
    assert draws != [draw_aggregator(7, 1, f"q{i}/1") for i in range(40)]


def test_aggregate_prompt_numbers_the_proposals():
    text = aggregate_prompt("What is 2+2?", ["4", "5"])
    assert text.startswith("What is 2+2?")
    assert "### Response 1\n4" in text and "### Response 2\n5" in text


# ---------------------------------------------------------------- smoothie


def test_smoothie_chooses_the_output_that_agrees_with_the_others():
    source = HashedBagOfWords(64)
    outputs = [
        "the capital of france is paris",
        "paris is the capital of france",
        "i think the answer is berlin in germany",
        "the capital city of france is paris",
    ]
    result = fit([source.embed(outputs)])
    assert result.chosen in (0, 1, 3)
    assert result.deltas[2] == max(result.deltas)  # the outlier is farthest from the truth
    assert result.samples == 1


def test_smoothie_matches_the_triplet_formula():
    # 1-d embeddings: voters at 0, 1, 3 -> d01=1, d02=9, d12=4; delta_i = (d_ij + d_ik - d_jk)/2
    result = fit([[[0.0], [1.0], [3.0]]])
    assert result.deltas == [3.0, -2.0, 6.0]
    assert result.weights is None and result.chosen == 1  # smallest estimate
    positive = fit([[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])  # d=1,1,2 -> deltas 0, 1, 1
    assert positive.deltas == [0.0, 1.0, 1.0] and positive.chosen == 0


def test_smoothie_weights_are_normalised_inverse_deltas():
    # orthogonal errors of sizes 1, 2, 3, 0.5: d_ij = s_i^2 + s_j^2, so delta_i = s_i^2 exactly
    sizes = [1.0, 2.0, 3.0, 0.5]
    result = fit([[[s if d == i else 0.0 for d in range(4)] for i, s in enumerate(sizes)]])
    assert [round(d, 9) for d in result.deltas] == [1.0, 4.0, 9.0, 0.25]
    assert abs(sum(result.weights) - 1) < 1e-9
    assert result.weights.index(max(result.weights)) == result.chosen == 3


def test_smoothie_independent_fit_pools_questions():
    # voter 0 is the odd one out on question A, voter 2 on question B (more strongly)
    a = [[5.0], [0.0], [0.2]]
    b = [[0.0], [0.1], [9.0]]
    assert fit([a]).chosen != 0
    both = fit([a, b])
    assert both.samples == 2 and both.deltas[2] == max(both.deltas)


def test_smoothie_needs_three_voters():
    with pytest.raises(ValueError, match="3\\+ voters"):
        fit([[[0.0], [1.0]]])


# ---------------------------------------------------------------- random workflow


def render(workflow) -> str:
    d = workflow.to_dict()
    return f"model_id = {d['model_id']}\nsubtasks = {d['subtasks']!r}\naccess_list = {d['access_list']}"


def test_random_workflows_are_valid_seeded_and_varied():
    flows = [random_workflow(7, 5, 0, f"q{i}/1") for i in range(60)]
    for flow in flows:
        parsed = parse_workflow(render(flow), range(7), 5)
        assert parsed.ok, parsed.error
        assert parsed.workflow == flow
        assert flow.access[0] == () and (len(flow) == 1 or flow.access[-1] == "all")
    assert flows == [random_workflow(7, 5, 0, f"q{i}/1") for i in range(60)]
    assert {len(f) for f in flows} == {1, 2, 3, 4, 5}
    assert {m for f in flows for m in f.model_ids} == set(range(7))
    assert flows != [random_workflow(7, 5, 1, f"q{i}/1") for i in range(60)]


def test_random_workflow_refuses_an_empty_pool():
    with pytest.raises(ValueError, match="needs workers"):
        random_workflow(0, 5, 0, "q")


# ---------------------------------------------------------------- embedding sources


def test_hashed_embeddings_are_deterministic_and_normalised():
    source = embedding_source("hash:32")
    assert source.name == "hash:32"
    [a, b, c] = source.embed(["Paris is nice", "paris IS nice!", "zebra quantum"])
    assert a == b and a != c and len(a) == 32
    assert abs(sum(x * x for x in a) - 1) < 1e-9
    assert source.embed([""]) == [[0.0] * 32]


def test_embedding_specs_are_checked():
    for bad in ("", "hash:3", "hash:x", "local:some/dir"):
        with pytest.raises(ValueError, match="embedding source"):
            embedding_source(bad)
    remote = embedding_source("text-embedding-3-small", "http://127.0.0.1:9/v1")
    assert remote.name == "text-embedding-3-small@http://127.0.0.1:9/v1"


class _Embeddings(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, self.headers.get("Authorization"), body))
        data = [{"index": i, "embedding": [float(len(t)), 1.0]} for i, t in enumerate(body["input"])]
        reply = json.dumps({"data": list(reversed(data))}).encode()  # out of order on purpose
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@pytest.mark.slow
def test_openai_compatible_endpoint_on_loopback():
    server = HTTPServer(("127.0.0.1", 0), _Embeddings)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        vectors = OpenAICompatible("emb-model", url, "k3y").embed(["ab", "abcd"])
        assert vectors == [[2.0, 1.0], [4.0, 1.0]]  # back in input order
        path, auth, body = server.seen[0]
        assert path == "/v1/embeddings" and auth == "Bearer k3y" and body["model"] == "emb-model"
    finally:
        server.shutdown()
    with pytest.raises(EmbeddingError, match="failed"):
        OpenAICompatible("emb-model", url, timeout=2).embed(["x"])
