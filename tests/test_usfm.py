import logging

import pytest

from citebible_pipeline.bible.usfm import UsfmError, decode_usfm, parse_usfm

HEAD = "\\id PSA test\n\\h Psalms\n\\mt1 The Psalms\n"


def parse(body: str, head: str = HEAD):
    return list(parse_usfm(head + body, "test.usfm"))


def test_words_notes_poetry_and_titles():
    vs = parse(
        "\\c 3\n\\d A Psalm by David.\n\\q1\n"
        '\\v 1 \\w Yahweh|strong="H3068"\\w*, how\\f + \\fr 3:1 \\ft A note.\\f* many!\n'
        "\\q2 \\wj “\\+w Come|strong=\"G2064\"\\+w*.”\\wj* \\qs Selah.\\qs*\n"
        "\\p\n\\v 2 Prose\\x + \\xo 3:2 \\xt Gen 1:1\\x* here.\n"
    )
    assert [v.text for v in vs] == ["Yahweh, how many! “Come.” Selah.", "Prose here."]
    assert vs[0].is_poetry and not vs[1].is_poetry
    assert vs[0].psalm_title == "A Psalm by David." and vs[1].psalm_title is None
    assert vs[0].footnotes == ["A note."] and vs[1].footnotes == []
    assert vs[0].strongs == ["H3068", "G2064"]
    assert vs[1].paragraph_start


def test_footnote_only_verse_has_empty_text_but_keeps_the_note():
    vs = parse("\\c 1\n\\p\n\\v 1 Text.\n\\v 2 \\f + \\fr 1:2 \\ft TR adds \\fqa more.\\f*\n")
    assert vs[1].text == "" and vs[1].footnotes == ["TR adds more."]


@pytest.mark.parametrize(
    "body, message",
    [
        ("\\v 1 Before any chapter.\n", r"test.usfm:4: verse \\v 1 before any \\c"),
        ("\\c 1\n\\p\n\\v 1 Open\\f + \\ft never closed.\n\\v 2 Next.\n", r"test.usfm:6: unclosed note \\f \(no matching \\f\*\)"),
        ("\\c 1\n\\p\n\\v 1 A \\zz odd\\zz* marker.\n", r"test.usfm:6: unknown marker \\zz"),
        ("\\c 1\n\\zp text\n", r"test.usfm:5: unknown paragraph marker \\zp"),
        ("\\c 1\n\\p\n\\v 1 One.\n\\v 1 Again.\n", r"test.usfm:7: repeated verse number PSA 1:1"),
        ("Loose text before the chapter.\n", r"test.usfm:4: text before the first \\c"),
        ("\\c x\n", r"test.usfm:4: chapter marker without a number"),
    ],
)
def test_malformed_usfm_names_file_and_line(body, message):
    with pytest.raises(UsfmError, match=message):
        parse(body)


def test_non_utf8_names_the_line():
    data = (HEAD + "\\c 1\n\\p\n\\v 1 caf\xe9\n").encode("latin-1")
    with pytest.raises(UsfmError, match=r"x.usfm:6: not UTF-8 \(byte 0xe9"):
        decode_usfm(data, "x.usfm")


def test_heading_before_first_verse_is_a_title_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        vs = parse("\\c 51\n\\p A Prayer of Jesus.\n\\q1\n\\v 1 I will give thanks.\n")
    assert vs[0].text == "I will give thanks." and vs[0].psalm_title == "A Prayer of Jesus."
    assert "test.usfm:5" in caplog.text


def test_missing_id_uses_the_given_book_code():
    vs = list(parse_usfm("\\c 1\n\\p\n\\v 1 In the beginning.\n", "x.usfm", book="GEN"))
    assert vs[0].book == "GEN"
    with pytest.raises(UsfmError, match="before an \\\\id line"):
        list(parse_usfm("\\c 1\n\\p\n\\v 1 In the beginning.\n", "x.usfm"))
