import pytest

from knowprobe.io import KnowprobeError
from knowprobe.prompts import check_template, fill_template, template_problem


def test_fill_template_puts_subject_and_mask():
    assert fill_template("[X] was born in [Y] .", "Dante", "[MASK]") == "Dante was born in [MASK] ."
    assert fill_template("The capital of [X] is [Y] .", " France ", "<mask>") == "The capital of France is <mask> ."
    assert (
        fill_template("[Y] participated in the [X] .", "Olympics", "[MASK]") == "[MASK] participated in the Olympics ."
    )


@pytest.mark.parametrize(
    "template, problem",
    [
        ("[X] was born in .", "0 [Y]"),
        ("was born in [Y] .", "0 [X]"),
        ("[X] and [X] met in [Y] .", "2 [X]"),
        ("[X] [Y] [Y]", "2 [Y]"),
        ("   ", "empty"),
    ],
)
def test_bad_templates_are_named(template, problem):
    assert problem in template_problem(template)
    with pytest.raises(
        KnowprobeError, match=r"relations.jsonl:7: .*" + problem.replace("[", r"\[").replace("]", r"\]")
    ):
        check_template(template, "relations.jsonl:7")


def test_good_template_passes():
    assert template_problem("[X] is located in [Y] .") is None
