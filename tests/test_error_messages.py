"""What every refusal reads like: one line, the parameter named as the front end names it."""
from __future__ import annotations

from dpfed_core.errors import ConfigError, DeploymentError, OptionError, render_message


def test_an_error_renders_on_one_line_with_each_parameter_named_as_the_front_end_names_it():
    """Newlines become spaces; a name holding an underscore is replaced wherever it stands whole
    (``value_max_rows`` is not ``value_max`` followed by ``_rows``); ``name=`` becomes the flag and a space on
    the CLI, the label and a colon on the dashboard; a plain word is rewritten only as ``name=``."""
    err = ConfigError("value_max is below the data;\nraise value_max_rows or pass items=list.txt", param="value_max")
    cli = {"value_max": "--value-max", "value_max_rows": "--value-max-rows", "items": "--items"}
    assert err.render(cli) == "--value-max is below the data; raise --value-max-rows or pass --items list.txt"
    page = {"value_max": "Value bound", "value_max_rows": "Row bound", "items": "Item catalogue"}
    assert err.render(page) == "Value bound is below the data; raise Row bound or pass Item catalogue: list.txt"
    assert render_message("the items of items=x", {"items": "--items"}) == "the items of --items x"
    assert err.param == "value_max"


def test_options_that_do_not_apply_name_what_does_or_that_nothing_does():
    """One option or several, and a source that takes no option at all, each said as such."""
    one = OptionError(["sep"], [], "MovieLens directories")
    assert str(one) == "option sep does not apply to MovieLens directories: leave it out; it takes none"
    two = OptionError(["sep", "encoding"], ["federation"], "MovieLens directories")
    assert str(two) == ("options sep, encoding do not apply to MovieLens directories: leave them out; accepted: "
                        "federation")
    assert two.render({"sep": "--sep", "encoding": "--encoding", "federation": "--federation"}) == (
        "options --sep, --encoding do not apply to MovieLens directories: leave them out; accepted: --federation")
    # an accepted option the front end has no name for (a Python-only parameter) is not offered to it
    three = OptionError(["sep"], ["federation", "sample_dir"], "MovieLens directories")
    assert three.param == "sep"
    assert three.render({"sep": "--sep", "federation": "--federation"}).endswith("accepted: --federation")


def test_a_deployment_error_says_whether_any_site_drew_noise():
    assert DeploymentError("the SuperLink did not start", ledger_rows=0).ledger_rows == 0
    assert DeploymentError("lost a node").ledger_rows is None


def test_a_long_value_in_an_error_is_cut_to_its_start_and_its_length():
    """A cell of thousands of characters is quoted by its first 60 and its length, in its quotes: one readable
    line that does not carry the whole private cell."""
    err = ConfigError("column 'note' holds '" + "S" * 300 + "', not a number; and " + "w" * 250)
    assert err.render() == ("column 'note' holds '" + "S" * 60 + "…' (300 characters), not a number; and "
                            + "w" * 60 + "… (250 characters)")
