"""Answer extraction shared by the checks (pure: no Inspect import).

The final answer is the content of the LAST explicit marker in the output:
- an `ANSWER:` line (upper case anywhere; `Final answer:` / `Final choice:` / `Final option:`
  anywhere; `Answer:` at a line start or after a sentence's end, also after `Proposed` / `Suggested` /
  `Correct` / `My` / `Our`; `Final Answer - X` at a line start; `Therefore:` / `Thus:` / `Hence:` opening the last
  line; a `### Final Answer` heading, the answer on the lines below;
  `ANSWER: \\[` or `$$` alone on the line: the display math below, up to its closer),
- `<answer>...</answer>` tags, also `<SOLUTION>...</SOLUTION>` (an unclosed tag runs to the end of the text;
  `answer>` at a line start is a tag that lost its `<`),
- "the final answer is X" (Minerva style: `$X$`, or the text up to ". " / end of line),
- `\\boxed{...}` / `\\fbox{...}` (nested braces allowed; also the garbled `\\beginboxed{...}`);
  boxes in a row form one list answer, labelled ones as `y_1 = A, y_2 = B`.
Only the text after the last `</think>` (less a `<think>` never closed, up to an `<answer>` tag in it) is read:
an answer given only in the reasoning scores 0. A few-shot continuation (a `Question:` / `Q:` / `[Question]` line below
the first answer: an invented next question and its answer) is cut off.
An answer taken back or hedged in the sentence right after it is none (`retraction`: `ANSWER: 5` then
`Or 6.`, `Actually, it's 6.`, `It could also be 6.`, `That's not correct.`, `Not sure though.`).
A marker inside another marker's content (`ANSWER: \\boxed{5}`) does not compete with
it: the outer content is read, then a marker inside it is unwrapped (see `final_answer`).

Time is linear in the input: outputs are clipped to their last MAX_INPUT_CHARS
characters (the answer is at the end), every regex uses bounded repetition where two
quantifiers meet, and braces are matched in one pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from dataclasses import dataclass

MAX_INPUT_CHARS = 16_000  # the checks read only the last 16k characters of an output
MAX_ANSWER_CHARS = 600  # a longer "final answer" is not one (rejected by the checks)


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check; `score` is the 0/1 reward."""

    correct: bool
    extracted: str | None
    reason: str

    @property
    def score(self) -> float:
        return 1.0 if self.correct else 0.0


def last_match(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of pattern in text (one linear scan)."""
    found = deque(pattern.finditer(text), maxlen=1)
    return found[0] if found else None


def clip(text: str) -> str:
    """The last MAX_INPUT_CHARS characters of text."""
    return text[-MAX_INPUT_CHARS:]


_THINK_CLOSE = re.compile(r"(?i:</think>)")
_THINK_OPEN = re.compile(r"(?i:<think>)")
_ANSWER_OPEN = re.compile(r"(?i:<(?:answer|solution)>)")  # `<SOLUTION>`: the Unsloth GRPO template's answer tag


# a few-shot continuation: a line that opens an invented next question ("Question: ...", "Q3:", "[Question]")
_NEXT_QUESTION = re.compile(
    r"^[ \t*#]{0,4}(?:\[(?i:question|problem)\]|(?i:question|problem)[ \t]{0,2}\d{0,3}[ \t]{0,2}:|Q[ \t]{0,2}\d{0,3}:)",
    re.MULTILINE,
)
_HASH_LINE = re.compile(r"^[ \t]{0,3}####", re.MULTILINE)  # a GSM8K answer line
# a question line that checks the answer above it is the response, not a continuation: "Question: Is that right? No,
# 6.", also one that refers back to it or rechecks it: "Problem: I made an error above", "Q: Let me double-check."
_SELF_CHECK = re.compile(
    r"(?i:\b(?:is|was|are)[ \t]{1,3}(?:that|this|it|the[ \t]{1,3}answer)\b"
    r"|\b(?:could|can|might|should)[ \t]{1,3}(?:it|that|this|the[ \t]{1,3}answer)[ \t]{1,3}be\b"
    r"|\b(?:right|correct|wrong|sure)[ \t]{0,3}\?"
    r"|\b(?:above|previous(?:ly)?|earlier|wait|hmm|actually|re-?check\w{0,3}|double[- ]?check\w{0,3}|re-?read\w{0,3}"
    r"|re-?examin\w{0,3}|mis(?:read|understood|calculated|counted)|let[ \t]{1,3}me|did[ \t]{1,3}i"
    r"|i[ \t]{1,3}(?:made|got|did|was|think|should|need)|my[ \t]{1,3}(?:answer|result|calculation|work))\b)"
)


def _before_next_question(text: str) -> str:
    """Text up to a few-shot continuation: a next-question line below the first answer given (a marker,
    a "the answer is" phrase or a `####` line). The invented question and its answer are not the
    response; a question line above any answer ("Question: ...\nAnswer: 4") or one that checks it ("Question: Is that
    right? No, ...") is kept."""
    if _NEXT_QUESTION.search(text, 1) is None:
        return text
    found = [m.start() for m in (_ANSWER_IS.search(text), _HASH_LINE.search(text)) if m is not None]
    found += [mk.start for mk in markers(text)[:1]]
    if not found:
        return text
    line_end = text.find("\n", min(found))
    nxt = _NEXT_QUESTION.search(text, line_end + 1) if line_end >= 0 else None
    if nxt is None or _SELF_CHECK.search(text, nxt.end(), _eol(text, nxt.end())):
        return text
    return text[: nxt.start()]


def response_part(text: str) -> str:
    """The clipped text after its last `</think>` (paired or not), less a `<think>` opened after it and
    never closed, up to an `<answer>` tag in it (that reasoning, cut off, ends where an answer block
    opens): an answer given only inside the reasoning does not count, and a letter after the
    reasoning is not read from it. A few-shot continuation after the answer is cut off."""
    text = clip(text)
    end = last_match(_THINK_CLOSE, text)
    text = text[end.end() :] if end else text
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        block = _ANSWER_OPEN.search(text, opened.end())
        text = text[: opened.start()] + (text[block.start() :] if block else "")
    return _before_next_question(text)


# "ANSWER:" (upper case) and "Final answer:" anywhere; "Answer:" / "Proposed answer:" only at a
# line start, so prose such as "check our answer: ..." is not a tag
_ANSWER_TAG = re.compile(
    r"(?<![A-Za-z])ANSWER[ \t*_]{0,8}:"
    r"|(?<![A-Za-z])(?i:final[ \t]{1,3}(?:answer|choice|option))[ \t*_]{0,8}:"
    r"|^[ \t*_#>]{0,8}(?i:(?:proposed|suggested|correct|my|our)[ \t]{1,3})?(?i:answer)[ \t*_]{0,8}:"
    r"|^[ \t]{0,8}(?i:answer)>"  # a tag that lost its "<": "answer> d"
    r"|^[ \t*_#>]{0,8}(?i:final[ \t]{1,3}answer)[*_]{0,4}[ \t]{1,3}[-–—][ \t]{1,3}",  # "Final Answer - 25"
    re.MULTILINE,
)
# "Done. Answer: 42": after a sentence's end, on the response's last line only (not "... example. Answer: 4 is
# given there" with more below)
_LATE_ANSWER = re.compile(r"(?<=[.!?] )(?i:answer)[ \t*_]{0,8}:")
# "Therefore: C", "Thus: -5": a conclusion word and a colon opening the response's last line (not one above more text)
_CONCLUSION_LINE = re.compile(r"^[ \t*_]{0,8}(?i:therefore|thus|hence)[*_]{0,2}[ \t]{0,3}:", re.MULTILINE)
# a heading, "### Final Answer" or "**Final Answer**" alone on its line: the block below it is the answer
_ANSWER_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]{1,3})?[*_]{0,2}(?i:final[ \t]{1,3}answer)[*_]{0,2}[ \t:]{0,3}[*_]{0,2}[ \t]{0,3}$",
    re.MULTILINE,
)
_NEXT_HEADING = re.compile(r"^[ \t]{0,3}#", re.MULTILINE)
_FINAL_IS = re.compile(r"(?i:final[ \t]{1,3}answer[ \t]{1,3}(?:is|would[ \t]be|will[ \t]be)[ \t:]{0,4})")
_ANSWER_CLOSE = re.compile(r"(?i:</(?:answer|solution)>)")
_BOX = re.compile(r"\\(?:begin)?(?:boxed|fbox)[ \t]{0,4}(\{)?")  # "\\beginboxed{": a garbled box


def strip_markdown(text: str) -> str:
    """Strip bold/italic/code markers and quote marks around a short answer."""
    # anchored passes, each linear (no backtracking across the whole string); a leading "_" is
    # emphasis only when a later "_" closes it ("_B_"): in "_B" or "_b. text" it is part of a name
    for _ in range(2):
        text = re.sub(r"^[\s*`#>]+", "", text)
        under = len(text) - len(text.lstrip("_"))
        if not under or "_" not in text[under:]:
            break
        text = text[under:]
    end = len(text)
    while end and text[end - 1] in " \t\r\n*_`":
        end -= 1
    return text[:end]


@dataclass(frozen=True)
class Marker:
    kind: str  # "answer_line" | "answer_tag" | "final_is" | "boxed"
    start: int
    cstart: int
    cend: int


_SPAN = MAX_ANSWER_CHARS + 1
_OPENERS = frozenset({"", "\\[", "$$", "\\(", "```", "**", "$"})
_DISPLAY = {"\\[": "\\]", "$$": "$$", "\\begin{equation*}": "\\end{equation*}", "\\begin{align*}": "\\end{align*}"}


def _eol(text: str, pos: int) -> int:
    """End of the line at pos, looking at most _SPAN characters ahead."""
    limit = min(len(text), pos + _SPAN)
    end = text.find("\n", pos, limit)
    return limit if end < 0 else end


def _line_content(text: str, pos: int) -> tuple[int, int]:
    """Span of the rest of the line at pos; the next non-empty line if it is blank; the
    display math below when the line only opens it (`ANSWER: \\[` ... `\\]`).

    Spans stop MAX_ANSWER_CHARS + 1 after their start (longer answers are rejected).
    """
    end = _eol(text, pos)
    line = text[pos:end].strip(" \t*_`")
    if line in _DISPLAY:  # "ANSWER: \\[" with the math on the lines below: up to its closer
        close = text.find(_DISPLAY[line], end, pos + _SPAN)
        if close >= 0:
            return end, close
    elif line:
        return pos, end
    nxt = end + 1
    while nxt < len(text):
        e = _eol(text, nxt)
        if text[nxt:e].strip() not in _OPENERS:  # skip blank lines and a bare "\\[" / "$$"
            return nxt, e
        nxt = e + 1
    return pos, end


def _final_is_content(text: str, pos: int) -> tuple[int, int]:
    """`$X$` / `\\(X\\)` / `\\[X\\]` right after the phrase, else up to ". " or end of line."""
    eol = _eol(text, pos)
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if text.startswith(left, pos):
            close = text.find(right, pos + len(left), pos + _SPAN)
            while close > 0 and right == "$" and text[close - 1] == "\\":  # \$ is a dollar sign
                close = text.find(right, close + 1, pos + _SPAN)
            if close >= 0:  # the sentence goes on to ". " ("$A$ or $B$." stays whole)
                pos_after = close + len(right)
                stop = text.find(". ", pos_after, eol)
                return pos, (eol if stop < 0 else stop)
    stop = text.find(". ", pos, eol)
    return pos, (eol if stop < 0 else stop)


def match_braces(text: str, start: int = 0) -> dict[int, int]:
    """Map each `{` at or after start to its matching `}` (one linear pass; `\\{` skipped)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def _boxes(text: str) -> list[Marker]:
    found = list(_BOX.finditer(text))
    if not found:
        return []
    pairs = match_braces(text, found[0].start())
    out = []
    for m in found:
        if m.group(1) is None:  # "\boxed 5"
            tail = re.match(r"[^\s$]{1,200}", text[m.end() : m.end() + 200])
            if tail:
                out.append(Marker("boxed", m.start(), m.end(), m.end() + tail.end()))
            continue
        close = pairs.get(m.end() - 1)
        if close is not None:
            out.append(Marker("boxed", m.start(), m.end(), close))
    return out


def _unsure_conclusion(line: str) -> bool:
    """Does a `Therefore:` line doubt, bound or call its value intermediate ("Thus: the intermediate value is 12")?"""
    return bool(_DOUBT.search(line) or BOUNDS.search(line) or _BOUND_WORD.search(line))


_BOUND_WORD = re.compile(r"(?i:\b(?:lower|upper)[ \t]{1,3}bound|\bbound(?:ed|s)?\b)")


def markers(text: str) -> list[Marker]:
    """Every explicit answer marker in text, by start position."""
    found: list[Marker] = []
    for m in _ANSWER_TAG.finditer(text):
        found.append(Marker("answer_line", m.start(), *_line_content(text, m.end())))
    for m in _LATE_ANSWER.finditer(text):
        start, end = _line_content(text, m.end())
        if not text[end:].strip():
            found.append(Marker("answer_line", m.start(), start, end))
    for m in _CONCLUSION_LINE.finditer(text):  # a conclusion that doubts or bounds is no answer: "Hence: 5 is a bound"
        start, end = _line_content(text, m.end())
        if not text[end:].strip() and not _unsure_conclusion(text[start : min(end, start + _SPAN)]):
            found.append(Marker("answer_line", m.start(), start, end))
    for m in _ANSWER_HEADING.finditer(text):
        below = _NEXT_HEADING.search(text, m.end() + 1)
        found.append(Marker("heading", m.start(), m.end(), below.start() if below else len(text)))
    for m in _FINAL_IS.finditer(text):
        found.append(Marker("final_is", m.start(), *_final_is_content(text, m.end())))
    opens = list(_ANSWER_OPEN.finditer(text))
    if opens:
        closes = [c.start() for c in _ANSWER_CLOSE.finditer(text)]
        j = 0
        for m in opens:
            while j < len(closes) and closes[j] < m.end():
                j += 1
            end = closes[j] if j < len(closes) else len(text)
            found.append(Marker("answer_tag", m.start(), m.end(), end))
    found.extend(_boxes(text))
    found.sort(key=lambda mk: mk.start)
    return found


def last_marker(text: str) -> Marker | None:
    """The last marker not nested in the content of an earlier one."""
    outer: Marker | None = None
    for mk in markers(text):
        if outer is not None and outer.cstart <= mk.start < outer.cend:
            continue
        outer = mk
    return outer


_DECORATION = re.compile(r"[\s$.,;:*_`]{0,40}")
_LEAD_IN = re.compile(
    r"^(?i:(?:so|thus|therefore|hence)?,?[ \t]{0,3}(?:the[ \t]{1,3})?(?:final[ \t]{1,3})?"
    r"(?:answer|result)[ \t]{1,3}(?:is|=|:)[ \t:]{0,3})"
)


_QUOTES = (('\\"', '\\"'), ('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"))


def _unwrap(content: str, depth: int = 0) -> str:
    """Read a marker's content: an inner marker is unwrapped, a lone box taken whole."""
    content = strip_markdown(content.strip())
    if depth < 2:
        inner = last_marker(content)
        # a whole solution inside <answer> tags: its own last marker is the answer
        long = "\n" in content or len(content) > _SPAN
        if inner is not None and inner.kind == "boxed" and long:
            return _box_run(content, inner)
        if inner is not None and inner.kind != "boxed":
            return _unwrap(content[inner.cstart : inner.cend], depth + 1)
    boxes = _boxes(content)
    if len(boxes) == 1:
        b = boxes[0]
        rest = content[: b.start] + content[b.cend + 1 :]
        if _DECORATION.fullmatch(rest):
            return content[b.cstart : b.cend].strip()
    # boxes among other text ("x = \boxed{5}", "\boxed{A} or \boxed{B}"): drop the wrappers
    for b in reversed(boxes):
        content = content[: b.start] + content[b.cstart : b.cend] + content[b.cend + 1 :]
    content = _LEAD_IN.sub("", content.strip()).strip()
    for q, end in _QUOTES:  # a quoted answer: "\"$12$\"", "'B'", "“d”"
        if len(content) > len(q) + len(end) and content.startswith(q) and content.endswith(end):
            return content[len(q) : -len(end)].strip()
    return content


# what may stand between boxes that together give one answer: "\\boxed{1}, \\boxed{2}",
# "\\boxed{A} \\quad \\text{or} \\quad \\boxed{B}" (then a list, which a single-valued check refuses)
_BOX_GAP = re.compile(
    r"(?:[\s,;$.]|\\quad|\\qquad|\\[\[\]()]|\\text\{[ \t]{0,3}(?:and|or)[ \t]{0,3}\}"
    r"|(?<![A-Za-z])(?:and|or)(?![A-Za-z]))*"
)
_MAX_BOX_GAP = 40


# a label right before a box: "y_2 = \\boxed{...}", "\\( y_2 = \\boxed{...}"
_BOX_LABEL = re.compile(r"([A-Za-z](?:_\{?\w{1,3}\}?)?)[ \t]{0,2}=[ \t]{0,2}(?:\\\(|\\\[|\$)?[ \t]{0,2}$")


def _box_label(text: str, start: int) -> str | None:
    m = _BOX_LABEL.search(text[max(0, start - 24) : start])
    return m.group(1) if m else None


def _box_run(text: str, last: Marker) -> str:
    """The last box, joined with the boxes right before it that form one list answer.

    Boxes that each carry a distinct label (`y_1 = \\boxed{A}` and `y_2 = \\boxed{B}`) are one
    answer in parts: "y_1 = A, y_2 = B".
    """
    offset = max(0, last.start - 4 * _SPAN)
    boxes = _boxes(text[offset : last.cend + 1])
    run = [(last.start, text[last.cstart : last.cend].strip())]
    end = last.start
    for b in reversed(boxes[:-1]):
        gap = text[offset + b.cend + 1 : end]
        if len(gap) > _MAX_BOX_GAP:
            break
        label = _BOX_LABEL.search(gap)
        if not _BOX_GAP.fullmatch(gap[: label.start()] if label else gap):
            break
        run.append((offset + b.start, text[offset + b.cstart : offset + b.cend].strip()))
        end = offset + b.start
    run.reverse()
    labels = [_box_label(text, start) for start, _ in run]
    if len(run) > 1 and all(labels) and len(set(labels)) == len(labels):
        return ", ".join(f"{label} = {part}" for label, (_, part) in zip(labels, run, strict=True))
    return ", ".join(part for _, part in run)


def final_answer(text: str | None) -> tuple[str | None, str]:
    """(answer, how found) from the last explicit marker; (None, why not) without one.

    "" means the marker has no content. The answer keeps its words and separators:
    judging hedges and lists is the checks' business.
    """
    if not text or not text.strip():
        return None, "empty output"
    text = response_part(text)
    if not text.strip():
        return None, "no text outside the reasoning (after </think>, before a <think> never closed)"
    mk = last_marker(text)
    if mk is None:
        return None, "no answer marker (ANSWER: line, <answer> tags, \\boxed{}, 'final answer is')"
    closed = _ANSWER_CLOSE.match(text, mk.cend) if mk.kind == "answer_tag" else None
    after = closed.end() if closed else mk.cend
    retracted = retraction(text, after)
    if retracted is not None:  # "ANSWER: 5\nOr 6.", "\boxed{5}\nThat is wrong."
        return None, f"retracted: the answer is taken back or hedged after it: {retracted.group(0)!r}"
    how = {
        "answer_line": "last ANSWER line",
        "answer_tag": "last <answer> tags",
        "heading": "last 'Final Answer' heading",
        "final_is": "last 'final answer is'",
        "boxed": "last \\boxed{}",
    }[mk.kind]
    if mk.kind == "boxed":
        answer = _box_run(text, mk)
    elif mk.kind in ("answer_tag", "heading"):  # may hold a whole solution: read its end
        answer = _unwrap(text[max(mk.cstart, mk.cend - 4 * _SPAN) : mk.cend])
    else:  # read at most one character past the limit: the checks refuse longer answers
        answer = _unwrap(text[mk.cstart : min(mk.cend, mk.cstart + _SPAN)])
    return answer[:_SPAN], how


# ------------------------------------------------------------------ without a marker

# "The answer is: **25**" anywhere (the rest of its line, up to ". "), not "the answer is not 5"
_ANSWER_IS = re.compile(
    r"(?i:\banswer[ \t]{1,3}(?:is|would[ \t]be|=)(?![ \t:]{0,4}(?:not|n['’]t)\b)[ \t:]{0,4})([^\n]{1,200})"
)
# chat-template tokens a generation may end with ("<|im_end|>", "<|im_start|>user", "</s>")
_TRAILING_TOKENS = re.compile(
    r"(?:[ \t\n]{0,8}(?:<\|[A-Za-z_]{1,20}\|>|</s>)[ \t]{0,3}(?:user|assistant)?)+[ \t\n]{0,8}$"
)
# what makes a sentence state a value: "x = 4", "the area is 12", "it's 6", "we get \\[ \\frac12 \\]"
_STATES = re.compile(
    r"(?<![<>!=])=(?!=)|≈|\\approx(?![A-Za-z])|(?<![A-Za-z])(?i:it|that|what|there|here)['’]s(?![A-Za-z])"
    r"|(?<![A-Za-z])(?i:is|are|was|were|has|have|had|equals|(?:would|will|must)[ \t]{1,3}be|comes[ \t]{1,3}to"
    r"|we[ \t]{1,3}(?:get|obtain|have|find)|gives|yields)(?![A-Za-z])"
)
# words that hedge a value ("probably 5", "likely C"), shared by the checks' doubt tests (the modal verbs "might",
# "could" only in sentences: an answer may restate its question, "the most she could earn is 18")
HEDGE_WORDS = "maybe|perhaps|possibly|probably|likely|presumably|guess|unsure"
# fraction words after a number change its value: "5 hundredths" is not 5 (the numeric and math checks)
FRACTION_WORDS = "halves|thirds|fourths|fifths|sixths|sevenths|eighths|ninths|tenths|hundredths|thousandths|millionths"
# a sentence or answer that says it is unsure ("not sure", "just a guess", "I doubt it")
UNSURE_WORDS = (
    r"(?:not|n['’]t)[ \t]{1,3}(?:sure|certain|confident)|unsure|uncertain|no[ \t]idea|just[ \t](?:a[ \t]guess|kidding)"
    r"|i[ \t]doubt"
)
UNSURE = re.compile(rf"(?i:\b(?:{UNSURE_WORDS})\b)")
# a sentence that doubts, negates, asks, conditions, sets up or offers another candidate states no answer
_DOUBT = re.compile(
    rf"(?<![A-Za-z])(?i:or|either|{HEDGE_WORDS}|might|could"
    r"|tentative\w{0,3}|unverified|confirm\w{0,3}|estimate\w{0,2}|not|no|never|wrong|incorrect|mistake\w?|doubt\w{0,3}"
    r"|if|unless|whether|when|otherwise|else|assum\w{1,3}|suppose|given|provided|let|try|check|verify|case"
    r"|another|also|alternatively|hope|pending|test|range|vs|approx|ish|unfinished|incomplete|preliminary|intermediate"
    r"|unconfirm\w{0,3}|unchecked"
    r"|for[ \t]{1,3}(?:even|odd|all|every|each|any|some|positive|negative|large|small))"
    r"(?![A-Za-z])|n['’]t(?![A-Za-z])|\?|~~"
)
# a closing sentence, passed over: "I hope this helps!", "Let me know if you have questions!", "Q.E.D.",
# "This is confirmed."
_CLOSING = re.compile(
    r"[ \t]{0,3}(?:(?i:(?:i[ \t])?hope[ \t](?:this|that|it)(?:[ \t][a-z]{1,10}){1,2}|q\.?e\.?d\.?|done|good[ \t]luck"
    r"|(?:let[ \t]me[ \t]know|feel[ \t]free|happy[ \t]to[ \t]help)(?:[ \t][a-z'’]{1,12}){0,8}"
    r"|(?:(?:this|that)(?:[ \t]is|[ \t]has[ \t]been|['’]s)[ \t])?(?:confirmed|verified|checked))[.!]?|∎|□)[ \t]{0,3}"
)
# the sentence right after an answer (after an interjection, "Hmm.", "Wait,"), with its end mark
_NEXT_SENTENCE = re.compile(
    r"[\s.,;:!)*_`$\]}(]{0,20}(?:(?i:hm{1,4}|wait|uh|um)[ \t]{0,2}[.,!…]{1,3}\s{0,3})?"
    r"((?:[^\n.!?]|\.(?=\d)){0,200})(?![^\n.!?]|\.\d)([.!?]?)"
)
# a value a sentence may offer: an option letter, a number, inline math
_VALUE = r"(?:\(?[A-J]\)?(?![A-Za-z'’])|[-+$]?\d[\d.,/]{0,20}%?|\$[^$\n]{1,80}\$)"
_REVISION_WORDS = r"actually|correction|on[ \t]second[ \t]thought|scratch[ \t]that"  # "Actually, it's 6."
_MAY_BE = r"[ \t]{1,3}(?i:might|could|may)(?:[ \t]{1,3}(?i:also|well|just|even))?[ \t]{1,3}(?i:be)[ \t]{1,3}"
# that sentence takes the answer back or offers another: a bare candidate ("Or 6.", "Maybe B.", "Or six.") or hedge
# ("Most likely."), a revision stating a value ("Actually, it's 6.", "Actually, the total should be 6."; not
# "Actually, the answer is not B.", "Actually, there is a faster way: ..."), doubt ("It could also be 6.",
# "I could be off by one"), a retraction ("That is wrong.", "That's not correct, the answer is 6.", "Wait, that
# can't be right.", "I miscalculated; ..."), unsureness ("Not sure though.", "Just a guess.") or strike-through;
# explanations that mention other options ("A or C would not fit", "It is wrong to add the rates") are not
_RETRACTED = re.compile(
    r"(?:(?i:or|maybe|perhaps|possibly|probably)(?:[ \t]{1,3}(?i:maybe|perhaps|possibly|even))?[ \t]{1,3}"
    rf"(?:{_VALUE}|[A-Za-z]{{2,12}})|(?i:no)[ \t]{{0,2}}[,:][ \t]{{0,3}}{_VALUE})[ \t)]{{0,3}}$"
    rf"|(?i:most[ \t]{{1,3}})?(?i:{HEDGE_WORDS}|i[ \t]guess)[ \t]{{0,3}}$"
    # "Actually, it's 6.", "Actually, no, it's 6."
    rf"|(?i:{_REVISION_WORDS})[*_]{{0,2}}[ \t,:]{{1,3}}(?:(?i:no)[ \t]{{0,2}}[,.;:!][ \t]{{1,3}})?"
    r"(?:(?i:(?:i[ \t]think[ \t]{1,3})?(?:it(?:['’]s|[ \t]{1,3}(?:is|was))"
    r"|(?:the|my)[ \t]{1,3}(?:final[ \t]{1,3})?(?:answer|total|result|value)(?:[ \t]{1,3}is)?)"
    r"(?:[ \t]{1,3}(?:should|must|would)[ \t]{1,3}be)?)[ \t:]{1,3})?"
    # a revision that rules a value out and states another: "Actually, it's not 5, it's 6."
    rf"(?:(?i:not)[ \t]{{1,3}}{_VALUE}[ \t]{{0,3}}(?:[,;][ \t]{{0,3}}(?i:(?:but|rather)[ \t]{{1,3}})?"
    r"(?i:it(?:['’]s|[ \t]{1,3}is)[ \t]{1,3})?|(?i:but|rather)[ \t]{1,3}))?"
    rf"{_VALUE}[ \t)]{{0,3}}(?:[,;(][^\n]{{0,200}})?$"
    rf"|(?i:but[ \t,]{{1,3}})?(?i:it|that|this|i|the[ \t]answer){_MAY_BE}"
    rf"(?:{_VALUE}|(?i:right|correct|the[ \t]answer|wrong|incorrect|off|mistaken)(?![A-Za-z]))"
    rf"|(?i:but[ \t,]{{1,3}})?{_VALUE}{_MAY_BE}(?i:right|correct|the[ \t]answer)(?![A-Za-z])"  # not "C might be wrong"
    r"|(?i:(?:that|this|it|my[ \t]answer)(?:[ \t]{1,3}(?:is|was)|['’]s)[ \t]{1,3}"
    r"(?:wrong|incorrect|false|not[ \t]{1,3}(?:right|correct|true)|a[ \t]mistake)"
    r"|(?:that|this|it)[ \t]{1,3}(?:can['’]?t|cannot|doesn['’]t|does[ \t]not|isn['’]t)[ \t]{1,3}"
    r"(?:(?:be|look|seem)[ \t]{1,3})?right"
    r"|oops|whoops)[ \t]{0,3}(?:$|[,;:—–])"
    r"|(?i:i[ \t]{1,3}(?:miscalculated|made[ \t]{1,3}an?[ \t]{1,3}(?:mistake|error)|was[ \t]wrong|messed[ \t]up))"
    r"|(?i:(?:but|though|although|honestly)[ \t,]{1,3})?(?i:i['’]?m[ \t]{1,3}|i[ \t]am[ \t]{1,3})?"
    rf"(?i:{UNSURE_WORDS})(?![A-Za-z])"
    # "This is unconfirmed.", "Not verified.", "This is confirmed wrong." (not the closing "This is confirmed.")
    r"|(?i:(?:(?:that|this|it)(?:[ \t]{1,3}(?:is|was|has[ \t]{1,3}been)|['’]s)[ \t]{1,3})?"
    r"(?:(?:not[ \t]{1,3}(?:yet[ \t]{1,3})?|un)(?:confirmed|verified|checked)"
    r"|(?:confirmed|verified|checked|shown|proven)[ \t]{1,3}(?:wrong|incorrect|false))"
    r"|(?:that|this|it)[ \t]{1,3}ha(?:s[ \t]{1,3}not|sn['’]t)[ \t]{1,3}(?:yet[ \t]{1,3})?been[ \t]{1,3}"
    r"(?:confirmed|verified|checked))"
    r"(?![A-Za-z])"
    r"|~~"
)
_OR_QUESTION = re.compile(r"(?i:or)(?![A-Za-z])")  # "Or is it 6?": a question that offers another
# the answer to a self-check question stating a value: "No, it's 6", "A: No, it is C", "Nope, the answer is 6"
_CHECKED_NO = re.compile(
    r"(?:A[ \t]{0,2}:[ \t]{0,3})?(?i:no|nope)[ \t]{0,2}[,.;:!—–-][ \t]{0,3}"
    rf"(?:(?i:it(?:['’]s|[ \t]{{1,3}}is)|the[ \t]{{1,3}}(?:final[ \t]{{1,3}})?answer[ \t]{{1,3}}is)[ \t]{{1,3}})?"
    rf"{_VALUE}"
)

# a self-check question answered "No." / "Nope." / "Not quite." / "Wrong, ..." (not "No, it's right.")
_DENIED = re.compile(
    r"(?:A[ \t]{0,2}:[ \t]{0,3})?(?i:no|nope|not[ \t]{1,3}(?:quite|really|exactly)|wrong|incorrect)[ \t]{0,3}"
    r"(?:$|[,;:—–-](?![^\n]{0,40}(?i:\b(?:right|correct|fine|true)\b)))"
)
_NEGATIVE_QUESTION = re.compile(r"(?i:\b(?:wrong|incorrect|mistaken|mistake|error|off|not)\b|n['’]t\b)")


def retraction(text: str, start: int) -> re.Match[str] | None:
    """The sentence right after start when it retracts the answer or offers another ("That is wrong.", "Or 6."), or
    answers a self-check question after it so ("Is that right? No, it's 6.")."""
    nxt = _NEXT_SENTENCE.match(text, start, start + _SPAN)
    if nxt is None:
        return None
    if nxt.group(2) == "?":
        offered = _OR_QUESTION.match(nxt.group(1))
        after = None if offered else _NEXT_SENTENCE.match(text, nxt.end(), nxt.end() + _SPAN)
        if after is None or after.group(2) == "?":
            return offered
        if _DENIED.match(after.group(1)) and not _NEGATIVE_QUESTION.search(nxt.group(1)):
            return _DENIED.match(after.group(1))  # "Is that right? No." / "Correct? Wrong, it's 6."
        return _CHECKED_NO.match(after.group(1)) or _RETRACTED.match(after.group(1))
    return _RETRACTED.match(nxt.group(1))


# after an answer phrase: a revision or retraction takes it back ("The answer is 5. Actually it's 6.")
_REVISED = re.compile(rf"(?<![A-Za-z])(?i:{_REVISION_WORDS}|wait|instead|rather|scratch)(?![A-Za-z])")
# a committed answer's contrast, kept out of the doubt test: "6, not 5.", "x = 6 (not 5)."
_CONTRAST = re.compile(r"(?:,[ \t]{0,3}|[ \t]{0,3}\([ \t]{0,3})not[ \t]{1,3}[^,;()\n]{1,40}\)?[ \t.!]{0,3}$")
# a line that is one item of a list or of a case split: "3. x = 6", "- x = 4", "(b) 7", "Case 2: ...", "Step 1: ..."
_LIST_ITEM = re.compile(r"[ \t]{0,8}(?:\d{1,3}[.)][ \t]|[-*•+][ \t]|\(?[a-z]\)[ \t]|(?i:case|step|part)\b)")
_SENTENCE_END = re.compile(r"[.!][ \t]{1,8}(?=\S)")
_VALUE_SIGN = re.compile(r"[\d$\\]")
_AND = re.compile(r"(?<![A-Za-z])(?i:and)(?![A-Za-z])")
_NAMES_ANSWER = re.compile(
    r"(?i:(?:the|my|our)[ \t]{1,3})?(?i:final[ \t]{1,3}|correct[ \t]{1,3})?(?i:answer|result|solution)"
)
_CONNECTIVE = re.compile(r"^[ \t]{0,3}(?i:so|thus|therefore|hence)?[ \t,]{0,3}")
_ARITHMETIC = re.compile(r"[\s\d.,+\-*/×÷·()^${}]{1,200}")  # "is 5 + 3 = 8": a computation, then its value
_NUMBER_RUN = re.compile(r"\d{1,40}(?:[.,]\d{1,40}){0,8}")
# prose between two numbers makes them two values: "7 in base 10", "5 out of 6", "4 & 5" (not "2\\sqrt{3}")
_PROSE_GAP = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}|&")


# the last clause of a tally gives its result: "..., leaving 2.", "..., total 8.", "First 5, then 10, finally 15." (a
# number and at most two words after it, not "for y" or "each", nor a qualifier: "8 so far", "2 initially", "2 too
# few", "2 unresolved", "8 before tax"; "8 approximately" is 8, an estimate)
_TALLY = re.compile(
    r"(?:^|,[ \t]{1,3}|[ \t]{1,3}(?=(?i:then|and)[ \t]))(?:(?i:and|so|then)[ \t]{1,3}){0,2}"
    r"(?i:finally|leaving|total(?:l?ing)?|in[ \t]{1,3}total|for[ \t]{1,3}a[ \t]{1,3}total[ \t]{1,3}of)[ \t:]{1,3}"
    r"(\$?[-+]?\d[\d,./]{0,20}%?(?:[ \t]{1,3}(?!(?i:for|to|of|per|each|by|with|from|in|at|on|so|far|yet|too|still"
    r"|before|after|first|un[a-z]{3,12}|(?!approximately|roughly)[a-z]{2,12}ly)(?![A-Za-z]))"
    r"[A-Za-z]{2,15}){0,2})[ \t]{0,3}[.!]?$"
)
# a sentence that names its answer before a tally: "The answer is 7, leaving 2." (the tally is not the answer)
_NAMED_ANSWER = re.compile(
    r"(?i:\b(?:answer|result|solution)[ \t]{1,3}(?:is|was|would[ \t]{1,3}be)\b|\banswer[ \t]{0,3}[:=])"
)


def _one_value(value: str) -> bool:
    """Does value state one value: brackets balanced, no prose between two of its numbers?"""
    if any(value.count(o) != value.count(c) for o, c in ("()", "[]", "{}")):
        return False  # cut inside a bracket: "4 (resp. 5)"
    runs = list(_NUMBER_RUN.finditer(value))
    return not any(_PROSE_GAP.search(value[a.end() : b.start()]) for a, b in zip(runs, runs[1:], strict=False))


def _sentences(text: str) -> tuple[str, list[str]]:
    """The last non-empty line of text (after chat tokens) and its sentences ("" when the line's last
    sentence starts before the MAX_ANSWER_CHARS window: its opening, a condition perhaps, unseen)."""
    text = _TRAILING_TOKENS.sub("", text[-4 * _SPAN :]).rstrip()
    line = text[text.rfind("\n") + 1 :].strip()
    window = line[-_SPAN:]
    starts = [0] if len(window) == len(line) else []
    starts += [m.end() for m in _SENTENCE_END.finditer(window)]
    return line, [window[a:b].strip() for a, b in zip(starts, [*starts[1:], len(window)], strict=False)]


def final_statement(text: str) -> str | None:
    """The value the response's last sentence states, without any marker: "The probability is 0.75.",
    "Therefore, x = 4.", "We get \\[ \\frac{1}{2} \\]", "It's 6, not 5.". The last sentence of the last
    non-empty line (a closing one, "I hope this helps!", is passed over) must state one value
    (`is`, `=`, `we get`...; what follows the first such word, with a digit or math in it, no "and", no prose
    between two numbers; a later such word may only name it, "the answer is $x = 5$", or give the value of a
    computation, "the total is 5 + 3 = 8"; "4 is the answer" names it before), must not doubt, negate, ask,
    set a condition or offer another candidate, and its line must not be an item of a list or case split; a tally's
    last clause gives its result ("..., leaving 2.", "..., total 8.", "First 5, then 10, finally 15.")
    (a careful grader reads such a sentence as the answer; one that hedges is no answer)."""
    line, sentences = _sentences(response_part(text))
    if not sentences or _LIST_ITEM.match(line):
        return None
    sentence = sentences[-1]
    if len(sentences) > 1 and _CLOSING.fullmatch(sentence):
        sentence = sentences[-2]  # "... is 0.75. I hope this helps!"
    sentence = _CONTRAST.sub("", sentence)
    tally = _TALLY.search(sentence)
    if tally is not None and not _DOUBT.search(sentence) and not _NAMED_ANSWER.search(sentence, 0, tally.start()):
        return tally[1]  # "We have 3 apples and 5 oranges, total 8."
    verbs = list(_STATES.finditer(sentence))
    if not verbs or _DOUBT.search(sentence):
        return None
    between = [sentence[a.end() : b.start()] for a, b in zip(verbs, verbs[1:], strict=False)]
    valued = [b for b in between if re.search(r"\d", b)]
    if any(not _ARITHMETIC.fullmatch(b) for b in valued):
        return None  # two values: "the cost is 10 and the profit is 20"
    value = strip_markdown(sentence[verbs[-1 if valued else 0].end() :].strip().rstrip(".!").strip())
    if _NAMES_ANSWER.fullmatch(value):  # "x = 4 is the answer", "Thus 4 is the final answer."
        value = _CONNECTIVE.sub("", sentence[verbs[-2].end() if len(verbs) > 1 else 0 : verbs[-1].start()]).strip()
    if not _VALUE_SIGN.search(value) or _AND.search(value) or not _one_value(value):
        return None  # no value, or several: "1,000 apples and 2,000 pears", "7 in base 10"
    return value


def unmarked_answer(text: str | None) -> tuple[str | None, str]:
    """Where no marker is found: the last sentence's stated value (`final_statement`), else the last
    "the answer is X" phrase, when neither its sentence nor anything after it doubts, revises or retracts
    it and it states one value; (None, why not) otherwise."""
    if not text or not text.strip():
        return None, "empty output"
    value = final_statement(text)
    if value is not None:
        return value, "no marker; the value the last sentence states"
    text = _TRAILING_TOKENS.sub("", response_part(text))
    phrase = last_match(_ANSWER_IS, text)
    if phrase is None:
        return None, "no answer marker (ANSWER: line, <answer> tags, \\boxed{}, 'final answer is') nor stated value"
    opening = re.split(r"[.!?][ \t]|\n", text[max(0, phrase.start() - _SPAN) : phrase.start()])[-1]
    rest = phrase.group(1)
    value = _CONTRAST.sub("", rest.split(". ")[0]).strip().rstrip(".!").strip()
    after = rest[len(rest.split(". ")[0]) :] + text[phrase.end() :]
    said = opening + phrase.group(0)[: len(phrase.group(0)) - len(rest)] + value
    after = " ".join(t for t in re.split(r"(?<=[.!?])[ \t]{1,8}|\n", after) if not _CLOSING.fullmatch(t))
    if len(after) > _SPAN or _DOUBT.search(said + after) or _REVISED.search(after):
        return None, "no marker; the 'the answer is X' phrase is doubted, revised or followed by more (no answer)"
    if not _one_value(value):
        return None, f"no marker; the 'the answer is X' phrase states several values: {value[:60]!r}"
    return value, "no marker; last 'the answer is X' phrase"


# a bound of the value, not the value: "at least 5", "at minimum 5", "5 max", "5 or more", "under 5", "up to 5"
BOUNDS = re.compile(
    r"(?i:\b(?:at[ \t](?:least|most|minimum|maximum|the[ \t](?:least|most))|(?:less|more|fewer|greater)[ \t]than"
    r"|or[ \t](?:more|less|fewer|greater|higher|lower)|(?:up[ \t]to|under|over)(?=[ \t]{1,3}\$?\d))\b"
    r"|(?<=\d)[ \t]{0,3}(?:max|maximum|minimum|tops)\b)"
)
# an explanation after the answer's value, a unit or two between them: "12 (the remainder is 0)", "42, which is the
# total after 2 days", "$5$, where ...", "12. We used 3 boxes of 4.", "18 dollars (3 boxes at 6 dollars each)"
_EXPLANATION = re.compile(
    r"(?<=[\d$}%])(?:[ \t]{1,3}[A-Za-z]{1,15}){0,2}"
    r"(?:[ \t]{1,3}\((?=[ \t]{0,3}(?:[-+$]?\d[\d.,]{0,12}[ \t]{1,3})?[A-Za-z]{2,}[ \t,])"
    r"|[ \t]{0,3},[ \t]{1,3}(?:which|where|since|because|i\.e\.)(?![A-Za-z])|[ \t]{1,3}(?:since|because)(?![A-Za-z])"
    r"|\.[ \t]{1,3}(?=[A-Z]))"
)


# names another answer, or concludes with a value ("12. Therefore \\boxed{14}." reads "12. Therefore 14")
_ANOTHER_ANSWER = re.compile(
    r"(?i:\b(?:answer|too|as[ \t]well)\b|\b(?:therefore|thus|hence|so)\b[ \t,:]{0,3}[-+$]{0,2}\d)"
)


def explained(answer: str) -> str:
    """The answer without the explanation after its value ("12 (the remainder is 0)" -> "12"), unless the explanation
    doubts, bounds or revises it ("5 (or 6)", "5. Actually 6.", "5 (at least)"), names an answer ("5. The answer is
    6.", "5 (6 works too)") or defines or computes with `=` ("$\\lfloor\\varphi n\\rfloor$, where $\\varphi = ...$"):
    then the answer as given, for the checks' other rules."""
    m = _EXPLANATION.search(answer[:_SPAN])
    if m is None:
        return answer
    rest = answer[m.start() :]
    if "=" in rest or _DOUBT.search(rest) or _REVISED.search(rest) or BOUNDS.search(rest) or UNSURE.search(rest):
        return answer
    if _ANOTHER_ANSWER.search(rest):
        return answer
    return answer[: m.start()]


_SUPERSCRIPT = re.compile(r"[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,6}")


def normalize_unicode(text: str) -> str:
    """NFKC (full-width letters and digits), unicode minus and a dash before a digit, vulgar fractions as " a/b",
    superscripts as powers (`10⁻³` -> `10^{-3}`)."""
    text = _SUPERSCRIPT.sub(lambda m: "^{" + unicodedata.normalize("NFKC", m.group(0)) + "}", text)
    out = []
    for ch in text:
        if ord(ch) > 127 and unicodedata.decomposition(ch).startswith("<fraction>"):
            num = unicodedata.normalize("NFKC", ch).replace("\u2044", "/")
            out.append(num if out and out[-1] in "+-\u2212" else " " + num)  # "1½" -> "1 1/2", "-½" -> "-1/2"
        else:
            out.append(ch)
    text = unicodedata.normalize("NFKC", "".join(out))
    text = re.sub("(?<![\\w.])[\u2010-\u2015](?=\\d)", "-", text)  # a dash as a sign: "–5" (not "12–15")
    return text.replace("\u2212", "-").replace("\u2044", "/")


def last_answer_line(text: str | None) -> str | None:
    """Content after the last `ANSWER:` tag (rest of its line; the next line if empty).

    Returns None when there is no tag; "" when the tag is followed by nothing.
    """
    if not text:
        return None
    text = clip(text)
    last = last_match(_ANSWER_TAG, text)
    if last is None:
        return None
    start, end = _line_content(text, last.end())
    return strip_markdown(text[start:end]).strip()


def find_boxed(text: str | None, last: bool = True) -> str | None:
    """Content of the last (or first) `\\boxed{...}` / `\\fbox{...}`, braces balanced."""
    if not text:
        return None
    found = _boxes(clip(text) if last else text[:MAX_INPUT_CHARS])
    if not found:
        return None
    b = found[-1] if last else found[0]
    src = clip(text) if last else text[:MAX_INPUT_CHARS]
    return src[b.cstart : b.cend]
