"""`eval`'s text tables (compiler.report_text): labels padded by their terminal width and never cut; histograms
short as lists, long as their nonzero entries."""

from __future__ import annotations

from compiler.report_text import (
    LONG_COUNTS,
    confusion_lines,
    counts_text,
    display_width,
    figure_text,
    per_class_lines,
    rjust,
)


def test_display_width_counts_terminal_columns() -> None:
    assert display_width("abc") == 3
    assert display_width("日本-語") == 7  # three wide characters and a hyphen
    assert display_width("nai\u0308ve") == 5  # a combining diaeresis takes no column
    assert rjust("日本", 6) == "  日本"


def test_short_labels_head_the_columns_and_line_up() -> None:
    lines = confusion_lines(["a", "日本"], [[3, 1], [0, 12]], [0, 0])
    assert [line.split() for line in lines] == [["a", "日本"], ["a", "3", "1"], ["日本", "0", "12"]]
    assert len({display_width(x) for x in lines}) == 1  # every line as wide on a terminal
    assert "none" not in lines[0]


def test_long_labels_that_share_a_prefix_are_numbered_and_kept_whole() -> None:
    labels = ["naïve-bayes-one", "naïve-bayes-two", "日本-語"]
    lines = confusion_lines(labels, [[1, 0, 0], [0, 2, 0], [0, 0, 3]], [0, 1, 0])
    assert lines[0].split() == ["0", "1", "2", "none"]
    assert [line.split()[:2] for line in lines[1:]] == [["0", "naïve-bayes-one"], ["1", "naïve-bayes-two"],
                                                         ["2", "日本-語"]]
    assert lines[2].split()[2:] == ["0", "2", "0", "1"]
    assert len({display_width(x) for x in lines}) == 1


def test_per_class_lines_keep_the_whole_label() -> None:
    row = {"n": 4, "accuracy": 0.5, "mean_features": 2.0, "mean_cost": 2.0}
    lines = per_class_lines({"a-very-long-class-label": row, "b": row})
    assert lines[1].split()[0] == "a-very-long-class-label" and lines[2].split()[0] == "b"
    assert len({display_width(x) for x in lines}) == 1


def test_a_short_histogram_prints_as_a_list() -> None:
    assert counts_text([0, 3, 0, 1]) == "[0, 3, 0, 1]"
    assert counts_text([1] * LONG_COUNTS) == str([1] * LONG_COUNTS)


def test_a_long_histogram_prints_its_nonzero_entries_and_its_length() -> None:
    h = [0] * 100
    h[5], h[40], h[99] = 47, 2, 10
    assert counts_text(h) == "{5: 47, 40: 2, 99: 10} of 100"
    assert counts_text([0] * (LONG_COUNTS + 1)) == f"{{}} of {LONG_COUNTS + 1}"


def test_a_histogram_with_many_nonzero_entries_prints_where_its_quarters_are_reached() -> None:
    """A cascade exiting at most of its 291 stages (keel:penbased, the defaults) printed all of them on the train
    line; now the stages by which 25, 50, 75 and 100% of the rows have exited and the rows at the last."""
    h = [0] * 300
    h[10:20] = [10] * 10  # 100 rows by stage 19
    h[50:60] = [10] * 10  # 200 by 59
    h[299] = 200  # 400 in all
    assert counts_text(h) == "400 over 300: 25/50/75/100% by 19/59/299/299, 200 at 299"
    assert counts_text([2] * (LONG_COUNTS + 1)).startswith(f"{2 * (LONG_COUNTS + 1)} over {LONG_COUNTS + 1}: ")
    # up to LONG_COUNTS nonzero entries still print one by one
    h = [0] * 300
    for i in range(LONG_COUNTS):
        h[i * 10] = 1
    assert counts_text(h).startswith("{0: 1, 10: 1, ") and counts_text(h).endswith("} of 300")


def test_figures_of_a_report_line() -> None:
    assert figure_text(0.123456) == "0.1235"
    assert figure_text(7) == "7"
    assert figure_text([0] * 20 + [3]) == "{20: 3} of 21"
    assert figure_text(["a", "b"]) == "['a', 'b']"
