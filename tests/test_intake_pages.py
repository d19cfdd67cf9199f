"""Data intake through the dashboard's upload (AppTest): the same inputs as the CLI cases of
tests/test_intake.py give the same results, and errors name the page's controls."""
from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[1]


def upload(data: bytes, name: str = "table.csv", kind: str | None = "ratings") -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value((name, data, "text/csv")).run()
    kinds = [w for w in at.selectbox if w.key == "map_kind"]
    if kind and kinds and kinds[0].value is None:
        kinds[0].set_value(kind).run()
    return at


def build(at: AppTest) -> AppTest:
    at.button(key="build_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def rows(extra=()) -> bytes:
    base = [f"u{e}{i},item{j},{(i + j) % 5 + 1},{e}" for e in "AB" for i in range(8) for j in range(5)]
    return ("user,item,value,entity\n" + "\n".join([*base, *extra]) + "\n").encode()


def test_upload_ids_are_exact_strings():
    data = rows(["1,5,3,A", "1,05,5,A", "01,5,2,B", "1.0,5,1,B"])
    at = build(upload(data))
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert {"1", "01", "1.0"} <= set(ds.user_ids) and {"5", "05"} <= set(ds.item_ids)
    assert ds.X.max() <= 5  # items 5 and 05 never summed
    assert at.session_state["upload"].getvalue() == data


def test_upload_zero_ratings_noted():
    at = build(upload(rows(["uA0,item9,0,A", "uB0,item9,0,B"])))
    assert any("rows with value 0" in i.value for i in at.info), [i.value for i in at.info]


def test_upload_declared_item_catalogue_fixes_the_columns():
    at = upload(rows())
    at.file_uploader(key="upload_items").set_value(
        ("formulary.txt", "".join(f"item{j}\n" for j in range(12)).encode(), "text/plain")).run()
    build(at)
    ds = at.session_state["dataset"]
    assert ds.n_items == 12 and ds.item_source == "declared"


def test_upload_error_names_the_control():
    at = build(upload(rows(["uA0,item9,7,A"])))
    msg = " ".join(e.value for e in at.error)
    assert "“Declared maximum of one value (public bound)”" in msg and "value_max" not in msg, msg


def test_a_declared_maximum_of_zero_is_said_to_be_not_positive_not_exceeded():
    at = upload(rows())
    [box] = [n for n in at.number_input if n.key.startswith("map_max")]
    box.set_value(0.0).run()
    build(at)
    assert not at.exception, [e.value for e in at.exception]
    msg = " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in at.error)
    assert len(at.error) == 1 and "“Declared maximum of one value (public bound)”" in msg, msg
    assert "must be a positive number" in msg and "above the declared maximum" not in msg, msg


def test_upload_value_kind_from_the_column_name():
    data = ("patient,drug,count,hospital\n" + "\n".join(
        f"p{e}{i},d{j},{(i + j) % 7 + 1},{e}" for e in "AB" for i in range(8) for j in range(5)) + "\n").encode()
    at = upload(data)
    assert at.selectbox(key="map_kind").value == "counts"  # not ratings
    data2 = data.replace(b"count", b"amount")
    at = upload(data2, kind=None)
    at.selectbox(key="map_value").set_value("amount").run()
    build(at)  # no default: the page asks instead of guessing ratings
    assert at.selectbox(key="map_kind").value is None
    msg = " ".join(e.value for e in at.error)
    assert "“Values are”" in msg, msg


def test_eicu_formulary_upload(eicu_dir):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("eicu").run()
    at.text_input(key="eicu_path").set_value(str(eicu_dir))
    at.file_uploader(key="eicu_items").set_value(
        ("formulary.txt", b"ACETAMINOPHEN 325 MG PO TABS\nfurosemide\nsome drug nobody got\n", "text/plain")).run()
    at.button(key="load_eicu").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    # the formulary's drugs are the shared columns; the demo's other drugs stay the hospitals' own
    assert list(ds.item_names[:3]) == ["acetaminophen", "furosemide", "some drug nobody got"]
    assert ds.item_source == "declared" and ds.n_declared == 3 and ds.n_items > 3
    # "Leave out entities" reaches the eICU loader too: a public declaration, every other hospital kept
    left_out = ds.entity_names[0]
    at.text_input(key="exclude_entities").set_value(f'"{left_out}"').run()
    at.button(key="load_eicu").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    fewer = at.session_state["dataset"]
    assert left_out not in fewer.entity_names and list(fewer.entity_names) == list(ds.entity_names[1:])


def test_upload_declared_entities_features_and_consent():
    """23 on the Data page: the declared entity list, item features and the consent checkbox."""
    at = upload(rows())
    at.file_uploader(key="upload_entities").set_value(
        ("entities.txt", b"entity\nA\nB\nC\n", "text/plain")).run()
    at.file_uploader(key="upload_features").set_value(
        ("features.csv", b"item,class,size\nitem0,1,2.5\nitem1,0,1\n", "text/csv")).run()
    build(at)
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert ds.entity_names == ["A", "B", "C"] and ds.entity_source == "declared"
    assert [r["users"] for r in ds.summary()] == [8, 8, 0]
    assert ds.item_feature_names == ["class", "size"] and ds.item_features.shape == (ds.n_items, 2)

    at = upload(rows())
    at.checkbox(key="upload_entities_from_data").check().run()
    build(at)
    ds = at.session_state["dataset"]
    assert ds.entity_source == "data" and ds.entities_accepted
    assert any("not protected" in w.value for w in at.warning), [w.value for w in at.warning]


def test_upload_bad_features_name_the_control():
    at = upload(rows())
    at.file_uploader(key="upload_features").set_value(("f.csv", b"item,class\nitem0,1_0\n", "text/csv")).run()
    msg = " ".join(e.value for e in at.error)
    assert "not a number" in msg and "Item features" in msg, msg
    assert not [b for b in at.button if b.key == "build_upload"]  # nothing is built without the features given


def test_upload_u_item_catalogue_keeps_its_titles_as_the_cli_does(tmp_path):
    """A u.item-style catalogue (id|title|…|0/1 genres) uploaded on the Data page names the items by
    their titles, exactly as ``--items`` of the CLI reads the same file."""
    from dpfed_core.data.long_table import load_long_table

    catalogue = "".join(f"{j}|Title {j} (199{j % 10})|01-Jan-1995||http://x|0|1|0\n" for j in range(12))
    table = rows().replace(b",item", b",").replace(b"user,,", b"user,item,")  # items named by their ids 0..4
    at = upload(table)
    at.file_uploader(key="upload_items").set_value(("u.item", catalogue.encode(), "text/plain")).run()
    ds = build(at).session_state["dataset"]
    (tmp_path / "u.item").write_text(catalogue)
    cli = load_long_table(table, filename="table.csv", user_col="user", item_col="item", value_col="value",
                          entity_col="entity", value_kind="ratings", value_max=5.0, items=str(tmp_path / "u.item"))
    assert list(ds.item_ids) == list(cli.item_ids) and ds.n_items == 12
    assert list(ds.item_names) == list(cli.item_names) and ds.item_names[3] == "Title 3 (1993)"


def test_the_pages_say_controls_where_the_engine_writes_cli_flags():
    """The catalogue forecast and the notes name the page's controls: no ``items=FILE`` (the CLI's flag)
    and no "set to FILE" on the Data page or after a run on the Federate page."""
    at = upload(rows())
    at.checkbox(key="upload_entities_from_data").check().run()
    shown = [i.value for i in build(at).info]
    assert any("no declared item catalogue" in s and "“Item catalogue” / “Formulary” upload" in s for s in shown), shown
    at.switch_page("pages/2_Federate.py").run()
    at.number_input(key="fed_rank").set_value(2).run()  # the table has 5 items
    at.button(key="fed_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [*shown, *(i.value for i in at.info), *(e.value for e in at.error), *(m.value for m in at.markdown)]
    assert not [t for t in texts if "=FILE" in t or "set to FILE" in t], [t for t in texts if "FILE" in t]


def test_a_catalogue_that_leaves_items_out_keeps_them_and_the_federate_page_says_what_was_shared():
    """Items of the upload outside the declared catalogue stay their entities' own: the Data page says
    so, the Federate page runs without an exception, shows V on the declared items and says the others
    have no row."""
    at = upload(rows())
    at.file_uploader(key="upload_items").set_value(
        ("formulary.txt", "item0\nitem1\nitem2\n".encode(), "text/plain")).run()
    at.checkbox(key="upload_entities_from_data").check().run()
    build(at)
    ds = at.session_state["dataset"]
    assert ds.n_items == 5 and ds.n_declared == 3 and list(ds.item_ids[3:]) == ["item3", "item4"]
    import re

    def seen(elements) -> list[str]:  # as the reader sees them (Markdown escapes of user data removed)
        return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]

    assert any("of 2 items not in the declared item catalogue ('item3', 'item4') as their entities' own items: "
               "never shared" in t for t in seen(at.info)), seen(at.info)
    assert any("users × 5 items (3 declared and shared, 2 the entities' own) in 2 entities" in t
               for t in seen(at.success)), seen(at.success)
    at.switch_page("pages/2_Federate.py").run()
    at.number_input(key="fed_rank").set_value(2).run()
    at.button(key="fed_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(seen(at.markdown))
    assert not at.error, seen(at.error)
    assert re.search(r"\(3 declared items × \d+ columns; the data's 2 items outside the declared catalogue have no "
                     "row", shown), shown
    assert "the declared item catalogue is what is shared: every message is shaped by its 3 items" in shown
    at.switch_page("pages/3_Evaluate.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("pages/4_Recommend.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(t.startswith("**2 of 5 items are not in the declared item catalogue**") and "item3, item4" in t
               for t in seen(at.info)), seen(at.info)


def test_a_list_headed_by_its_columns_name_is_read_as_the_cli_reads_it(tmp_path):
    """An entity list whose first line is the entity column's name, and a catalogue whose first line is
    the item column's, are read with that line as their header, on the Data page as by the CLI: no
    entity called 'site', no item called 'drug'."""
    from dpfed_core.data.long_table import load_long_table

    table = rows().replace(b"user,item,value,entity", b"patient,drug,value,site")
    at = upload(table)
    at.file_uploader(key="upload_entities").set_value(("sites.txt", b"site\nA\nB\nC\n", "text/plain")).run()
    at.file_uploader(key="upload_items").set_value(
        ("formulary.txt", ("drug\n" + "".join(f"item{j}\n" for j in range(6))).encode(), "text/plain")).run()
    ds = build(at).session_state["dataset"]
    assert not at.error, [e.value for e in at.error]
    (tmp_path / "sites.txt").write_text("site\nA\nB\nC\n")
    (tmp_path / "formulary.txt").write_text("drug\n" + "".join(f"item{j}\n" for j in range(6)))
    cli = load_long_table(table, filename="table.csv", user_col="patient", item_col="drug", value_col="value",
                          entity_col="site", value_kind="ratings", value_max=5.0,
                          entities=str(tmp_path / "sites.txt"), items=str(tmp_path / "formulary.txt"))
    assert ds.entity_names == cli.entity_names == ["A", "B", "C"]
    assert list(ds.item_ids) == list(cli.item_ids) and "drug" not in ds.item_ids and ds.n_items == 6
    # a user attribute's column is named on the page "attribute: …"; its list's header is its own name
    from dpfed_core.data.upload import attribute_column_name, source_column_name

    assert source_column_name(attribute_column_name("zip")) == "zip" and source_column_name("site") == "site"


def test_tradeoff_says_a_simulation_on_uploaded_records_is_charged_as_its_button_does():
    """On an upload (people's records) a simulation sweep is charged as non-private: the page's words on
    its noise agree with the button's charge, never 'not charged' beside 'spends ε = ∞'."""
    table = [f"u{e}{i},item{(i * j) % 23},{(i + j) % 5 + 1},{e}" for e in "AB" for i in range(30) for j in range(6)]
    at = upload(("user,item,value,entity\n" + "\n".join(table) + "\n").encode())
    at.checkbox(key="upload_entities_from_data").check().run()
    build(at)
    at.switch_page("pages/2_Federate.py").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run").click().run()
    at.switch_page("pages/5_Trade-off.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "ε = ∞" in at.button(key="sweep_run").label
    noise = [c.value for c in at.caption if "simulation noise" in c.value]
    assert noise and all("not charged" not in c and "non-private, ε = ∞" in c for c in noise), noise


def test_tradeoff_never_sweeps_a_rank_the_federate_page_refuses_for_these_data(tmp_path, monkeypatch):
    """Five items: the default rank 8 is refused by the Federate page and the CLI; the Trade-off page says
    so with the same rule and offers no button, so nothing is run or charged."""
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    at = upload(rows())
    at.checkbox(key="upload_entities_from_data").check().run()
    build(at)
    at.switch_page("pages/5_Trade-off.py").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [e.value for e in at.error if "“rank ℓ (latent factors)” must be a whole number from 1 to 5" in e.value]
    assert said and "Set it on the Federate page" in said[0], [e.value for e in at.error]
    assert not [b for b in at.button if b.key == "sweep_run"]
    assert not (tmp_path / "store.sqlite3").exists()


def test_tradeoff_before_any_federate_run_sweeps_ratings_in_the_cli_sweeps_mode(tmp_path, monkeypatch):
    """A sweep's crossing on a ranking metric is a ranking claim: `sweep` without --mode runs zero mode on
    ratings, and so does the Trade-off page when no Federate run has chosen a mode; the page says so."""
    from dpfed_core.evaluation.defaults import sweep_mode

    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    table = [f"u{e}{i},item{(i * j) % 23},{(i + j) % 5 + 1},{e}" for e in "AB" for i in range(30) for j in range(6)]
    at = upload(("user,item,value,entity\n" + "\n".join(table) + "\n").encode())
    at.checkbox(key="upload_entities_from_data").check().run()
    build(at)
    assert at.session_state["dataset"].value_kind == "ratings"
    at.switch_page("pages/5_Trade-off.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("in zero mode as the command line's sweep runs a ranking metric" in c.value for c in at.caption)
    at.text_input(key="sweep_grid").set_value("1").run()
    at.text_input(key="sweep_seeds").set_value("0").run()
    at.multiselect(key="sweep_refs").set_value(["local"]).run()
    at.button(key="sweep_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["sweep"]["doc"]["config"]["mode"] == sweep_mode(None) == "zero"
    assert sweep_mode("observed") == "observed" and sweep_mode(None, "test_rmse") is None


def _page(source: str) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value(source).run()
    return at


def test_movielens_loads_by_the_key_chosen_with_the_public_item_features_given(ml100k_dir):
    """The MovieLens path box loads the federation key the page shows, with the item features uploaded
    beside it, and the page names the features it holds."""
    at = _page("movielens")
    at.text_input(key="ml_path").set_value(str(ml100k_dir))
    at.selectbox(key="ml_fed").set_value("gender")
    feats = "item,class\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(1, 41))
    at.file_uploader(key="ml_features").set_value(("features.csv", feats.encode(), "text/csv")).run()
    at.button(key="load_ml").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    ds = at.session_state["dataset"]
    assert sorted(ds.entity_names) == ["F", "M"]
    # the uploaded column joins the features MovieLens carries itself (genres, years)
    assert {"class=a", "class=b"} <= set(ds.item_feature_names), list(ds.item_feature_names)
    shown = {m.label: m.value for m in at.metric}
    assert (shown["Users"], shown["Items"]) == (f"{ds.n_users:,}", f"{ds.n_items:,}"), shown
    captions = [c.value for c in at.caption if c.value.startswith("Public item features:")]
    assert captions and f"{ds.item_features.shape[1]} columns" in captions[0], captions


def _mini_eicu(root):
    root.mkdir()
    (root / "patient.csv").write_text("patientunitstayid,hospitalid\n"
                                      + "".join(f"{i},{1 + i % 2}\n" for i in range(1, 13)))
    (root / "hospital.csv").write_text("hospitalid,region\n1,South\n2,West\n")
    (root / "medication.csv").write_text("medicationid,patientunitstayid,drugname\n" + "".join(
        f"{k},{1 + k % 12},{['furosemide', 'heparin'][k % 2]}\n" for k in range(24)))
    (root / "lab.csv").write_text("labid,patientunitstayid,labname,labresult\n" + "".join(
        f"{k},{1 + k % 12},{['potassium', 'BUN'][k % 2]},4\n" for k in range(24)))
    return root


def test_eicu_loads_every_event_table_chosen_by_the_key_chosen_and_the_declared_entities(tmp_path):
    """Every event table ticked is read (its items named with their table), the federation key chosen
    is the entities', a declared entity list is the federation (a region without stays takes part), and
    no ticked table is an error naming the control."""
    at = _page("eicu")
    at.text_input(key="eicu_path").set_value(str(_mini_eicu(tmp_path / "eicu")))
    at.multiselect(key="eicu_tables").set_value(["medication", "lab"])
    at.selectbox(key="eicu_entity").set_value("region")
    at.file_uploader(key="eicu_entities").set_value(("regions.txt", b"South\nWest\nNortheast\n", "text/plain")).run()
    at.button(key="load_eicu").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    ds = at.session_state["dataset"]
    assert sorted(ds.entity_names) == ["Northeast", "South", "West"]
    assert sorted(ds.item_names) == ["lab: BUN", "lab: potassium", "medication: furosemide", "medication: heparin"]
    at.multiselect(key="eicu_tables").set_value([]).run()
    at.button(key="load_eicu").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == ["Choose at least one table in “Event tables (items)”."]


def test_an_upload_is_built_with_the_missing_value_repeat_and_item_name_rules_chosen_and_its_cli_says_them():
    """The mapping's rules reach the loader: a row without a value is left out when asked (and counted),
    repeated ratings are averaged when asked, the item-name column names the items, and the command
    line the page keeps for the CLI carries the same options."""
    base = [f"u{e}{i},item{j},{(i + j) % 5 + 1},{e},Title {j}" for e in "AB" for i in range(8) for j in range(5)]
    data = ("user,item,rating,entity,title\n"
            + "\n".join([*base, "uA0,item0,5,A,Title 0", "uB1,item2,,B,Title 2"]) + "\n").encode()
    at = build(upload(data))
    assert any("line 83" in e.value for e in at.error), [e.value for e in at.error]  # the default: stop and name it
    at.selectbox(key="map_missing").set_value("drop")
    at.selectbox(key="map_dups").set_value("mean")
    build(at)
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert list(ds.item_names) == [f"Title {j}" for j in range(5)]
    assert ds.X[list(ds.user_ids).index("uA0"), list(ds.item_ids).index("item0")] == 3.0  # (1 + 5) / 2
    assert any(n.startswith("dropped 1 row with an empty value") for n in ds.notes), ds.notes
    spec, opts = at.session_state["dataset_cli"]
    assert spec == "table.csv" and opts["drop_missing"] is True and opts["duplicates"] == "mean"
    assert opts["item_name_col"] == "title" and opts["value_max"] == 5.0


def test_counts_are_bounded_at_ten_by_default_and_their_repeats_add_up_whatever_a_ratings_rule_said():
    """Counts take their own default bound (10) and their fixed rule for repeated rows (they add up):
    the page offers no ratings rule for them, so none reaches the loader."""
    data = ("patient,drug,count,hospital\n" + "\n".join(
        [f"p{e}{i},d{j},{(i + j) % 7 + 1},{e}" for e in "AB" for i in range(8) for j in range(5)]
        + ["pA0,d0,2,A"]) + "\n").encode()
    at = upload(data)
    assert at.selectbox(key="map_kind").value == "counts"
    [box] = [n for n in at.number_input if n.key.startswith("map_max")]
    assert box.value == 10.0
    assert not [s for s in at.selectbox if s.key == "map_dups"]
    build(at)
    assert not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert ds.value_max == 10.0
    assert ds.X[list(ds.user_ids).index("pA0"), list(ds.item_ids).index("d0")] == 3.0  # 1 + 2


def test_a_leave_out_entry_that_cannot_be_read_stops_the_page_at_its_error():
    """An unreadable “Leave out entities” is one error, and nothing can be loaded beside it: no load
    button is offered until the entry reads (a load would otherwise go on without the exclusion)."""
    at = _page("sample")
    assert [b for b in at.button if b.key == "load_sample"]
    at.text_input(key="exclude_entities").set_value('"hospital 01').run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.error) == 1 and at.error[0].value.startswith("“Leave out entities”:"), [e.value for e in at.error]
    assert not [b for b in at.button if b.key == "load_sample"]


def test_a_user_attribute_table_uploaded_after_the_ratings_proposes_its_entity_column():
    """A long table without an entity column, then its user-attribute table: the mapper proposes the
    attribute table's ZIP column as the entity (as it does for a table read with its attributes), not an
    empty box with an error asking for the attribute table just uploaded; a column the user chose stays."""
    from test_upload import U_DATA, U_USER

    at = upload(U_DATA.encode(), "u.data")
    assert at.selectbox(key="map_entity").value is None
    at.file_uploader(key="upload_attrs").set_value(("u.user", U_USER.encode(), "text/plain")).run()
    assert at.selectbox(key="map_entity").value == "attribute: zip code"
    assert not at.error, [e.value for e in at.error]
    at.selectbox(key="map_entity").set_value("attribute: occupation").run()
    at.file_uploader(key="upload_items").set_value(("f.txt", b"1\n2\n", "text/plain")).run()
    assert at.selectbox(key="map_entity").value == "attribute: occupation"
