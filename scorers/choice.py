"""Multiple-choice letter check (pure: no Inspect import).

The answer (see scorers.extract.final_answer) must name exactly one option letter, at its
start or, failing that, as the only upper-case option letter in it (`I'd go with C`):
`B`, `(B)`, `[B]`, `B.`, `B) because ...`, `**B**`, `$C$`, `$\\mathrm{C}$`, `\\text{(B)}`,
`option D`, full-width `Ｂ`, `$\\mathcal{D}$`, `B/B`; lower case alone or as a label (`b`, `(b) the
nucleus`, `b.`), asserted (`b is correct`, `a because`), or after a selection (`the answer is b
because`; not the article: `the answer is a cat`). A letter in a name or address (`field_B`, `B2`,
`éB`, `https://example.org/B`) or named by the word before it (`the value of C`, `Vitamin B`,
`plan B`) is not chosen; "I" before a word that is no link is the pronoun. An answer
naming a second letter (`A or B`, `A, B`, `A B`, `(A)/(B)`, `ABCD`, `A but maybe B`; `B/I` even
past the known options, `B, with A a close second`) or saying it is unsure (`B, but I'm not sure`, `not confident`)
is a hedge and scores 0;
"A" before a word that is no verb or link is the article (`A polygenic risk score` names no
option); a letter it rules out in its own clause does not count (`It is D, it can't be A or B`,
`A is wrong, it is B`, `C (not A)`, `B seems unlikely`, `B is tempting, but D fits`), and ruling out every letter
names none.
A later explicit selection in the answer is read from there on (`Vitamin C helps. Answer: D`,
`could be (A) or (B), but I choose (C)`, `ruled out A, then B, settled on C`), as is a revision
(`C, but actually A was right, no wait B`, `C, on second thought D`) unless it rules its letter out
(`B. Actually A is wrong`; also after the answer line: `Answer: C` then `Actually, the answer is j`,
`Actually, it's j` or `Wait, no: j`;
"Option B is correct" selects B), adds a candidate (`A. Actually, B is also plausible`: a hedge) or names
a letter ruled out before it (`Not C, wait, C`); `C++` and `C#` are names, not options. A gold
letter past the allowed ones extends them to it (gold `E` or `N`: the options run at least to it).
Without any marker, the last "the answer is (X)" / "the answer: X" / "correct option is X"
phrase counts, its letter on the same line or the next ("the best answer is:", then "(B) ...";
also "... is:" with a lettered option below), else the letter the last line selects or states ("Choose B.",
"It must be [C]"; not negated or hedged), else a letter alone on the last line (not the last
of a column of letters; `Option D.` / `Choice A.` too), else one alone on the first line with no other option
letter below.
Text before the last `</think>` is reasoning and is not read.
"""

from __future__ import annotations

import re

from scorers.extract import (
    HEDGE_WORDS,
    MAX_ANSWER_CHARS,
    UNSURE,
    CheckResult,
    final_answer,
    last_marker,
    last_match,
    normalize_unicode,
    response_part,
    retraction,
    strip_markdown,
)

_WRAPPERS = re.compile(
    r"\\(?:text|mathrm|textbf|mathbf|textrm|mbox|boxed|fbox|mathcal|mathscr|mathit|mathsf|mathtt|textit|textnormal"
    r"|textsf|texttt|boldsymbol|bm)[ \t]{0,3}\{([^{}]{0,80})\}"
)
_MATH_DELIMS = re.compile(r"\\[()\[\]]|\$")
# characters that make a letter part of a word or name: "field_B", "B2", "éB", "αBβ" (not CJK: "答案是C")
_WORDISH = "A-Za-z0-9_\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff"
# markup names no option ("<answer>B</wrong>": the tag is no negation)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_-]{0,20}>")
# a URL or e-mail address names no option ("https://example.org/(B)", "b@example.org")
_ADDRESS = re.compile(r"(?i:\bhttps?://[^\s<>\"]{1,300}|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8})")
_PREFIX = re.compile(
    r"^(?i:(?:the[ \t]{1,3})?(?:correct[ \t]{1,3})?(?:option|choice|answer)[ \t]{0,3}(?:is[ \t]{1,3})?:?[ \t]{0,3})"
)
_LEAD = re.compile(rf"([(\[{{]?)[ \t]{{0,3}}([A-Za-z])[ \t]{{0,3}}([)\]}}]?)(?![{_WORDISH}+#])")
# a second option right after the first: "or B", ", B", " B", "/B", "& (B)", "and C"
_SECOND = re.compile(
    r"^[\s,/&;|+.:-]{0,10}(?:(?i:and/or|or|and|vs\.?|then|maybe|perhaps|possibly|also)[\s,]{1,5}){0,3}"
    r"[(\[]?([A-Za-z])[)\]]?(?![A-Za-z0-9])"
)


def _clean(content: str) -> str:
    s = normalize_unicode(content)
    for _ in range(3):  # \boxed{\text{B}}
        s = _WRAPPERS.sub(r"\1", s)
    s = _MATH_DELIMS.sub("", _TAG.sub(" ", _ADDRESS.sub(" ", s)))
    s = strip_markdown(s.strip())
    return _PRONOUN.sub("i", _ARTICLE.sub("a", _PREFIX.sub("", s).strip()))


# the article "A" before a word that is no verb or link ("A polygenic risk score ..." is option
# text, not option A; "A is correct", "A fits", "A because ..." name A)
_ARTICLE = re.compile(
    r"(?<![A-Za-z0-9'’(\[{])A(?=[ \t]{1,3}(?!(?:is|was|seems|appears|looks|would|will|should|must|can|could|might"
    r"|may|does|did|has|had|being|because|since|as|but|and|or|nor|then|it|also|only|too|here|there|for|in|with|if"
    r"|so|vs|versus|now|again|remains|best)\b)(?:[a-z]{2,30}[a-rt-z](?![A-Za-z])"
    r"|[a-z]{2,30}s(?=[ \t]{1,3}(?:is|are|was|were|has|have|had)\b)))"
)
# the pronoun "I" before a word that is no link ("I think ...", "I choose C"; not "I is correct")
_PRONOUN = re.compile(
    r"(?<![A-Za-z0-9'’(\[{])I(?=[ \t]{1,3}(?!(?:is|was|seems|appears|looks|because|since|as|and|or|fits|matches"
    r"|remains|best|also|only|too)\b)[a-z]{2,30}(?![A-Za-z]))"
)
# a lower-case letter is a choice alone, as a label ("b.", "(b) the nucleus"), or with an assertion
# ("b is correct", "a because ..."); right after a selection ("the answer is b", "I pick b and stop")
# also before a link word, but never the article ("the answer is a cat")
_LOWER_ASSERTED = re.compile(
    r"[ \t]{1,3}(?i:because|since|is[ \t]{1,3}(?:correct|right|the[ \t]{1,3}(?:correct|right|best)[ \t]{1,3}"
    r"(?:answer|option|choice)))\b"
)
_LOWER_SELECTED = re.compile(
    r"[ \t]{1,3}(?i:as|and|but|so|therefore|thus|given|which|here|now|is|seems|fits|matches|was)\b"
)


# a word right before a letter that makes it a name, not a selection ("the value of C", "Vitamin B",
# "plan B", "labels B"); a link or selection word does not ("it is D", "I'd go with C", "it's C")
_WORD_BEFORE = re.compile(  # not "(C)": a bracketed letter is a label
    r"(?:(?<![A-Za-z'’])([A-Za-z'’]{1,6})[ \t]{1,3})?([A-Za-z'’]{1,30})[ \t*_\"'“]{1,4}$"
)
# a subject pronoun makes the word after it a verb ("I believe C", "we conclude C"): a selection
_SUBJECTS = frozenset("i we i'd we'd i'll we'll i'm you they".split())
_SELECTING_WORDS = frozenset(
    """is was be are it's that's so thus hence then therefore with for choose chose pick picked select selected
    answer option choice letter am go say final definitely clearly probably likely surely certainly actually
    indeed obviously only just not sure must should would could will becomes equals gives get gets got remains
    leaves yields""".split()
)


def _mentioned(clause: str, start: int) -> bool:
    """Does an ordinary word right before the letter at start make it a name ("Vitamin B")?"""
    word = _WORD_BEFORE.search(clause[max(0, start - 48) : start])
    if word is None or (word.group(1) or "").lower().replace("’", "'") in _SUBJECTS:
        return False
    return word.group(2).lower().replace("’", "'") not in _SELECTING_WORDS


def _letter_in_prose(s: str, letters: str) -> tuple[str | None, str]:
    """ "I'd go with C", "it is D, it can't be A or B": the one upper-case option letter the
    answer names in a clause that does not negate it (letters it rules out do not count); a
    letter named by the word before it ("the value of C") is mentioned, not chosen."""
    named: set[str] = set()
    mentioned: set[str] = set()
    ruled_out: set[str] = set()
    for clause in _CLAUSE.split(s[:MAX_ANSWER_CHARS]):
        found = [t for t in _STANDALONE.finditer(clause) if t.group(0) in letters]
        if _NEGATION.search(clause):
            ruled_out.update(t.group(0) for t in found)
            continue
        for t in found:
            (mentioned if _mentioned(clause, t.start()) else named).add(t.group(0))
    named -= ruled_out
    mentioned -= ruled_out | named
    if len(named) == 1 and not mentioned:
        return named.pop(), ""
    if len(mentioned) == 1 and not named:
        return None, f"answer mentions a letter as a name, not a choice: {s[:60]!r}"
    if named or mentioned:
        return None, f"answer names more than one option (a hedge scores 0): {s[:60]!r}"
    if ruled_out:
        return None, f"answer negates or rules out an option, naming none: {s[:60]!r}"
    return None, f"answer names no choice letter {'/'.join(letters)}: {s[:60]!r}"


def _lower_is_choice(letter: str, closer: str, rest: str, marked: bool) -> bool:
    """Is a lower-case letter at the start of an answer a choice (see _LOWER_ASSERTED)?"""
    if not rest.strip() or closer or re.match(r"[ \t]{0,3}[.):\]*,;!?]", rest) or _LOWER_ASSERTED.match(rest):
        return True
    return marked and (letter != "a" or not re.match(r"[ \t]{1,3}[a-z]", rest) or bool(_LOWER_SELECTED.match(rest)))


def letter_of(
    content: str, letters: str = "ABCD", selection: bool = True, marked: bool = False
) -> tuple[str | None, str]:
    """The one option letter an answer names, or (None, why not). A later explicit selection
    ("Vitamin C helps. Answer: D", "could be (A) or (B), but I choose (C)") is read from there on."""
    s = _clean(content)
    if not s:
        return None, "answer is empty"
    chosen = last_match(_SELECTION, s[:MAX_ANSWER_CHARS]) if selection else None
    if chosen is not None and not _negated_before(s, chosen.start()):
        rest = s[chosen.end() :]
        # a revision ("no wait B") counts unless it rules its letter out ("actually A is wrong");
        # one that only adds a candidate ("actually B is also plausible") is a hedge
        clause = _CLAUSE.split(rest, maxsplit=1)[0]
        if chosen.group("rev") and (_HEDGE_WORD.search(clause) or _ALSO.search(clause)):
            return None, f"answer revises to a second candidate (a hedge scores 0): {s[:60]!r}"
        if not chosen.group("rev"):
            return letter_of(rest, letters, selection=False, marked=True)
        if not _NEGATION.search(clause):
            letter, why = letter_of(rest, letters, selection=False, marked=True)
            if letter and letter in _ruled_out(s[: chosen.start()]):  # "Not C, wait, C"
                return None, f"answer rules out {letter} and then names it (contradicts itself): {s[:60]!r}"
            return letter, why
    if UNSURE.search(s[:MAX_ANSWER_CHARS]):  # "B but I'm not sure": after a selection, only what follows it is read
        return None, f"answer says it is unsure (a hedge scores 0): {s[:60]!r}"
    m = _LEAD.match(s)
    if not m or m.group(2).upper() not in letters:
        return _letter_in_prose(s, letters)
    letter, rest = m.group(2), s[m.end() :]
    bare = not m.group(3) and not re.match(r"[ \t]{0,3}[.:]", rest)  # "D) None of the above" is an option
    if bare and _NEGATION.search(_CLAUSE.split(s[:MAX_ANSWER_CHARS], maxsplit=1)[0]):  # "C seems unlikely"
        return _letter_in_prose(s, letters)
    if letter.islower() and not _lower_is_choice(letter, m.group(3), rest, marked):
        return _letter_in_prose(s, letters)  # "i think it's C": the upper-case letters decide
    if letter.isupper() and not m.group(1) and not m.group(3) and rest.startswith("'"):
        return None, f"not a choice letter: {s[:60]!r}"  # "A's ..."
    second = _SECOND.match(rest)
    if (
        second
        and second.group(1).upper() in letters
        and second.group(1).upper() != letter.upper()  # "B/B" names B once more
        and (second.group(1).isupper() or letter.islower() or second.group(0).rstrip().endswith((")", "]")))
    ):
        return None, f"answer names more than one option (a hedge scores 0): {s[:60]!r}"
    paired = _PAIRED.match(rest)  # "B/I", "D or H", "A and E": a second letter past the options known from the gold
    if paired and (paired.group(1) or paired.group(2)) != letter.upper():
        return None, f"answer names more than one option (a hedge scores 0): {s[:60]!r}"
    other = next((m for m in _STANDALONE.finditer(rest[:MAX_ANSWER_CHARS]) if m.group(0) in letters), None)
    if other is not None and other.group(0) != letter.upper():
        if _NEGATION.search(s):  # "A is wrong, it is B", "D. it can't be A or B": by clause
            return _letter_in_prose(s, letters)
        gap = rest[: other.start()]
        hedged = _HEDGE_WORD.search(gap)  # "A but maybe B", "A, or possibly B"
        if hedged or (not _PROSE_WORD.search(_COMMAND.sub(" ", gap)) and not re.search(r"\d", gap)):  # "A; B"
            return None, f"answer names more than one option (a hedge scores 0): {s[:60]!r}"
    return letter.upper(), ""


# a second capital letter joined to the first by "/", "or", "and", "plus", "with", "&" or "," ("B, with A a close
# second"), past the known options too
# (after a comma only where the letter ends a list item: not "D, E=mc^2 explains it")
_PAIRED = re.compile(
    r"[ \t]{0,2}(?:,?[ \t]{0,2}(?:/|&|(?:or|and|plus|with|as[ \t]well[ \t]as|along[ \t]with)[ \t])[ \t]{0,2}"
    r"[(\[]?([A-J])[)\]]?"
    r"(?![A-Za-z0-9'’])"
    r"|,[ \t]{0,2}[(\[]?([A-J])[)\]]?(?=[ \t]{0,2}(?:[,.;]|$|(?:or|and)(?![A-Za-z]))))"
)
_STANDALONE = re.compile(rf"(?<![{_WORDISH}'’])[A-Z](?![{_WORDISH}'’+#])")  # not "C++", "C#", "ID_B"
# "Answer: D", "I choose (C)", "the answer is actually C": an explicit selection, its letter next
# ("option D is wrong" names D, it does not select it: choice/option/selection need "is" or ":")
_SELECTION = re.compile(
    r"(?i:\banswer(?:[ \t]{1,3}(?:is|would[ \t]be|will[ \t]be))?(?:[ \t]{0,3}[:=][ \t]{0,3}|[ \t]{1,3})"
    r"|\b(?:choice|option|selection)(?:[ \t]{1,3}is[ \t]{1,3}|[ \t]{0,3}:[ \t]{0,3})"
    r"|\b(?:choose|chose|pick|select|go[ \t]with|opt[ \t]for|settled?[ \t]on|finali[sz]e(?:[ \t]on)?)[ \t]{1,3}"
    r"(?:(?:option|choice|letter)[ \t]{1,3})?"  # "I choose option B"
    r"|(?P<rev>\b(?:actually|no[ \t,]{1,3}wait|wait[ \t]{0,2}[,:]|on[ \t]second[ \t]thought"
    r"|correction[ \t]{0,2}:)[ \t,]{0,3})"
    r"|\b(?:option|choice)[ \t]{1,3}"  # "Option B is correct" selects B ("option D is wrong" does not)
    r"(?=[(\[]?[A-Za-z][)\]]?[ \t]{1,3}is[ \t]{1,3}(?:the[ \t]{1,3})?(?:correct|right)\b))"
    rf"(?i:(?:actually|definitely|clearly)[ \t]{{1,3}})?(?=[(\[]?[A-Za-z][)\]]?(?![{_WORDISH}'’+#]))"
)


def _ruled_out(s: str) -> set[str]:
    """Letters that s names in a clause that negates them."""
    clauses = _CLAUSE.split(s[:MAX_ANSWER_CHARS])
    return {t for c in clauses if _NEGATION.search(c) for t in _STANDALONE.findall(c)}


def _negated_before(s: str, start: int) -> bool:
    """A negation in the clause just before a selection ("I would not choose A")."""
    return bool(_NEGATION.search(_CLAUSE.split(s[max(0, start - 24) : start])[-1]))


_NEGATION = re.compile(
    r"(?i:\b(?:not|never|except|wrong|incorrect|unlikely|none|neither|nor|cannot|rather[ \t]than|instead[ \t]of"
    r"|eliminat\w{0,4}|exclud\w{0,3}|rul\w{0,3}[ \t]out|tempting)\b"
    r"|n['’]t\b)"
)
# clause breaks: punctuation and the conjunctions that start a new claim
_CLAUSE = re.compile(
    r"[,;.!?\n—–]|\((?![A-Za-z]\))|[ \t]-[ \t]|(?=\b(?i:rather[ \t]than|instead[ \t]of)\b)"
    r"|(?i:\b(?:because|since|therefore|so|thus|hence|but|while|whereas|although)\b)"
)
_COMMAND = re.compile(r"\\[A-Za-z]+")
_HEDGE_WORD = re.compile(r"(?i:\b(?:maybe|perhaps|possibly|or|either|alternatively)\b)")
_ALSO = re.compile(r"(?i:\b(?:also|too|might|could|plausible)\b)")
_PROSE_WORD = re.compile(r"(?i:\b(?!(?:or|and|vs|maybe|perhaps|possibly|also|then)\b)[a-z]{2,})")
# "the answer is (B)", "the best answer is:" with the letter on the next line, "the answer: D"
_PHRASE = re.compile(
    r"(?i:answer|option|choice)(?:[ \t]{1,3}(?i:is|would[ \t]be|=)[ \t:]{0,12}|[ \t]{0,2}:[ \t]{0,12})"
    r"(?:\n[ \t]{0,4}){0,2}(?=[*_(\[$\\A-Za-z])"
    r"|(?i:\bis)[ \t]{0,3}:[ \t]{0,4}(?:\n[ \t]{0,4}){1,2}(?=[*_]{0,2}[(\[][A-Z][)\]])"  # "... step is:" then "(B) ..."
    r"|(?i:\b(?:option|choice))[ \t]{1,3}"  # "Option B is correct."
    r"(?=[(\[]?[A-Za-z][)\]]?[ \t]{1,3}(?i:is[ \t]{1,3}(?:the[ \t]{1,3})?(?:correct|right))\b)"
)
# a revision after the answer line: "Answer: C" then "Actually, the answer is j.", "Actually, it's C.", "Wait, no: C."
# (read from there on)
_LATE_REVISION = re.compile(
    r"(?i:\b(?:actually|no[ \t,]{1,3}wait|on[ \t]second[ \t]thought|correction[ \t]{0,2}:?)[ \t,]{0,3}"
    r"(?:I[ \t]{1,3}(?:choose|pick|select)[ \t]{1,3}|(?:the[ \t]{1,3})?(?:correct[ \t]{1,3}|final[ \t]{1,3})?"
    r"answer[ \t]{1,3}is[ \t:]{1,3}|it(?:['’]s|[ \t]{1,3}(?:is|must[ \t]{1,3}be|should[ \t]{1,3}be))[ \t]{1,3})"
    r"|\bwait[ \t,]{1,3}no[ \t]{0,2}[,:][ \t]{0,3})"
)
_LONE_LETTER = re.compile(r"[ \t*_(\[]{0,6}([A-Z])[ \t*_)\].]{0,6}")  # "C" alone on the last line
# "Option D." / "Choice A." alone on the last line (the first-line rule keeps to a bare letter)
_LONE_OPTION = re.compile(r"[ \t*_(\[]{0,6}(?:(?i:option|choice)[ \t]{1,3}[(\[]{0,2})?([A-Z])[ \t*_)\].]{0,6}")


# a line opening with an option's label: "Option C: 7, correct!", "C) 7", "(C) is wrong"
_OPTION_LABEL = re.compile(
    r"[ \t*_#(\[]{0,6}(?:(?i:option|choice)[ \t]{1,3}[(\[]{0,2})?([A-Z])(?:[ \t*_]{0,3}[).:\]]|[ \t]{1,3}(?i:is|was)\b)"
)


def _next_item(above: str, letter: str) -> bool:
    """Is the lone letter the next item of a lettered list, the line above labelled with the letter before it
    ("Option C: 7, correct!" then "Option D.": an item not yet written, not a pick)?"""
    label = _OPTION_LABEL.match(above)
    return label is not None and ord(label.group(1)) + 1 == ord(letter)


def extract_choice(completion: str | None, letters: str = "ABCD") -> tuple[str | None, str]:
    """Return (letter or None, how it was found / why not)."""
    answer, how = final_answer(completion)
    if answer is not None or how.startswith("retracted"):
        text = response_part(completion or "")
        mk = last_marker(text)
        late = last_match(_LATE_REVISION, text[mk.cend :]) if mk else None
        if late is not None and mk is not None:
            start = mk.cend + late.end()
            letter, _ = letter_of(text[start : start + 200].split("\n")[0], _RUN, marked=True)
            if letter:  # one that names no letter ("actually, the answer is not B") leaves the answer
                return (letter, "a revision after the answer") if letter in letters else (None, "revised to no option")
        if answer is None:
            return None, how
        if not answer:
            return None, f"{how}: answer is empty"
        letter, why = letter_of(answer, letters)
        return (letter, f"from {how}") if letter else (None, f"{how}: {why}")
    if completion is None or not how.startswith("no answer marker"):
        return None, how
    text = response_part(completion).replace("\u00a0", " ")
    last = last_match(_PHRASE, text)
    if last is None:
        stated = _stated_letter(text, letters)
        if stated:
            return stated, "no answer marker; the letter the last line selects or states"
        lines = [line for line in text.rstrip().rsplit("\n", 8)[-8:] if line.strip()][-2:]
        lone = [_LONE_OPTION.fullmatch(line) for line in lines]
        if (
            lone
            and lone[-1]
            and lone[-1].group(1) in letters
            and not (len(lone) == 2 and (lone[0] or _next_item(lines[0], lone[-1].group(1))))
        ):
            return lone[-1].group(1), "no answer marker; the letter alone on the last line"
        first, _, after = text.lstrip().partition("\n")
        lead = _LONE_LETTER.fullmatch(first)
        if lead and lead.group(1) in letters and not any(t in letters for t in _STANDALONE.findall(after)):
            return lead.group(1), "no answer marker; the letter alone on the first line, no other letter below"
        return None, "no answer marker and no 'the answer is X' phrase"
    line_end = text.find("\n", last.end(), last.end() + 200)
    phrase = text[last.end() : line_end if line_end >= 0 else last.end() + 200]
    if retraction(text, last.end() + len(phrase.split(". ")[0])) or UNSURE.search(
        text, last.end(), last.end() + MAX_ANSWER_CHARS
    ):
        return None, "'the answer is' phrase: taken back or hedged after it"
    phrase = phrase.split(". ")[0]
    letter, why = letter_of(phrase, letters, marked=True)
    if letter is None:
        return None, f"'the answer is' phrase: {why}"
    return letter, "no answer marker; from 'the answer is X' phrase"


# "it must be [C]", "this is (B)", "the statement is X": a capital letter stated as what the answer is (by a
# pronoun or a word for the answer: "the vertex is C" names a point, not an option)
_STATED = re.compile(
    r"(?i:\b(?:it|this|that|the[ \t]{1,3}(?:(?:correct|right|best|only)[ \t]{1,3})?"
    r"(?:answer|option|choice|letter|statement|one|solution|response)\w?)"
    r"(?:[ \t]{1,3}(?:is|must[ \t]{1,3}be|has[ \t]{1,3}to[ \t]{1,3}be)|['’]s)[ \t]{1,3})"
    rf"(?=[(\[]?[A-Z][)\]]?(?![{_WORDISH}'’+#]))"
)
# "C is correct", "Option A is the best choice": a capital letter asserted as the answer on the last line
_ASSERTED = re.compile(
    r"(?<![A-Za-z])(?i:(?:option|choice)[ \t]{1,3})?[(\[]?([A-Z])[)\]]?[ \t]{1,3}(?i:is)[ \t]{1,3}"
    r"(?i:the[ \t]{1,3})?(?i:correct|right|best)(?:[ \t]{1,3}(?i:answer|option|choice|one))?(?![A-Za-z])"
)
_BELIEF = re.compile(
    r"[ \t*_>]{0,6}(?i:(?:so|thus|therefore|hence|overall|finally)[ \t,]{1,3})?"
    r"(?i:(?:i|we)[ \t]{1,3}(?:think|believe|conclude|am[ \t]confident)(?:[ \t]{1,3}that)?[ \t,]{1,3})?"
)
_SAID_LETTER = re.compile(r"(?i:(?:actually|definitely|clearly)[ \t]{1,3})?[(\[]?[A-Za-z][)\]]?")
# what may follow the letter on the line: nothing, a sentence's end or a reason ("Choose B. for this one.",
# "It is C because ..."), not more words ("Pick B up from the station", "It's B-ish")
_TAIL = re.compile(r"[ \t]{0,3}(?:[.!:;,)\]]|$)|[ \t]{1,3}(?i:because|since|as)(?![A-Za-z])")
_LINE_DOUBT = re.compile(
    rf"(?<![A-Za-z])(?i:{HEDGE_WORDS}|might|could|possible|unless|if|else|or|either|kidding)(?![A-Za-z])|\?|~~"
)


def _stated_letter(text: str, letters: str) -> str | None:
    """The letter the last line selects ("Choose B. for this one."), states ("It must be [C]") or asserts
    ("C is correct"),
    unless negated or doubted in the clause before it, or followed by doubt, a condition or another
    option letter ("Choose B, I guess.", "It is B if x > 0, else C."); None otherwise."""
    line = text.rstrip().rsplit("\n", 1)[-1][-MAX_ANSWER_CHARS:]
    said = last_match(_SELECTION, line) or last_match(_STATED, line) or last_match(_ASSERTED, line)
    if said is None or _negated_before(line, said.start()):
        return None
    clause = _CLAUSE.split(line[max(0, said.start() - 24) : said.start()])[-1]
    said_letter = None if said.re is _ASSERTED else _SAID_LETTER.match(line, said.end())  # ensured by lookaheads
    rest = line[said_letter.end() if said_letter else said.end() :]
    if _LINE_DOUBT.search(clause + rest) or not _TAIL.match(rest) or "~~" in line:
        return None
    if any(t.group(0) in letters for t in _STANDALONE.finditer(rest)):
        return None  # "Choose B for speed, C for accuracy."
    if (
        said.re is _ASSERTED
    ):  # only after nothing or a plain belief: "I think C is correct" (not "If ..., C is correct")
        return said.group(1) if said.group(1) in letters and _BELIEF.fullmatch(line[: said.start()]) else None
    letter, _ = letter_of(line[said.start() :], letters, marked=True)
    if letter is None and said.re is _STATED:
        letter, _ = letter_of(line[said.end() :], letters, selection=False, marked=True)
    return letter


_RUN = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def check_choice(completion: str | None, target: str, letters: str = "ABCD") -> CheckResult:
    """Is the one chosen letter the target letter?"""
    gold = target.strip().upper()
    if len(gold) == 1 and letters == _RUN[: len(letters)] and gold in _RUN[len(letters) :]:
        letters = _RUN[: _RUN.index(gold) + 1]  # the options run at least to the gold letter (E)
    letter, how = extract_choice(completion, letters)
    if letter is None:
        return CheckResult(False, None, how)
    if letter == gold:
        return CheckResult(True, letter, f"{letter} == {gold} ({how})")
    return CheckResult(False, letter, f"{letter} != {gold} ({how})")
