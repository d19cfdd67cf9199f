"""Data: a bundled sample, a real loader or an upload; column mapping; the federation key."""
from __future__ import annotations

import json

import streamlit as st

from dpfed_core.ui import widgets as ui
from dpfed_core.ui import engine as dash
from dpfed_core.errors import DpfedError
from dpfed_core.data.features import feature_table_json
from dpfed_core.data.inputs import read_item_features, read_list, split_names
from dpfed_core.data.eicu import EICU_EVENT_TABLES
from dpfed_core.data.long_table import infer_value_kind, read_item_list

ui.page_setup("Data", ":material/folder_open:")
st.title("Data")
st.caption("Users of different entities are disjoint; the item catalogue is shared. Nothing you "
           "upload is changed: the file is read as is and kept only in this session.")

SOURCES = {
    "sample": "Bundled sample",
    "movielens": "MovieLens directory",
    "eicu": "eICU directory",
    "upload": "Upload CSV / Parquet",
}
ui.widget_default("data_source", "sample")  # the source chosen last time, when coming back to the page
source = st.radio("Source", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="data_source")
ui.remember("data_source")

NONE = "(none)"


def _load(fn, *args, source_text: str, path_box: bool = False) -> None:
    """Load through a cached loader; show a loader error as one message in the page's words (for a
    path box without any listing of the server's directories)."""
    try:
        with st.spinner("Loading…"):
            ds = fn(*args)
    except DpfedError as exc:
        if path_box:
            st.error(dash.safe_loader_message(exc), icon=":material/error:")
        else:
            st.error(dash.load_error_text(exc), icon=":material/error:")
        return
    # a loader spec and its options: the CLI's --data and data flags reproduce the same data
    if fn is ui.load_spec:
        cli = (args[0], json.loads(args[1]))
    elif fn is ui.load_upload_job and args[4] is None:  # (data, file name, options, header-less, attributes)
        cli = (args[1], {**json.loads(args[2]), **({"headerless": True} if args[3] else {})})
    else:  # a user-attribute join has no CLI flag: the command names the data it cannot reproduce
        cli = None
    ui.set_dataset(ds, source_text, cli)
    st.success(f"Loaded {dash.escape_md(ds.name)}: {ds.n_users} users × {ds.items_phrase()} in {ds.n_entities} "
               "entities.")


exclude = st.text_input("Leave out entities (optional, comma-separated names)", key="exclude_entities",
                        help="A public declaration: every other entity takes part whatever its size — no "
                             "entity is dropped for its true number of users, which would leak it. A name "
                             "holding a comma goes in double quotes: \"A, ward\", B")
try:
    excluded = split_names(exclude)
except ValueError as exc:
    st.error(f"“Leave out entities”: {exc}", icon=":material/error:")
    st.stop()


def public_inputs(prefix: str, entities_help: str, consent: bool = False, column: str | None = None) -> dict | None:
    """The declared entity list and the item features (public inputs) as loader
    options; an unreadable file is shown as an error naming its control and stops the page.
    ``column``: the entity column, whose name on a list's first line is its header (as the CLI reads it)."""
    c1, c2 = st.columns(2)
    ents = ui.kept_upload(c1, "Declared entity list (optional): one entity per line (e.g. MovieLens u.occupation)",
                          dash.ENTITY_LIST_TYPES, f"{prefix}_entities", help=entities_help)
    feats = c2.file_uploader("Item features (optional): CSV of item id + columns (numbers or categories)",
                             type=["csv", "tsv", "txt", "gz", "item"], key=f"{prefix}_features",
                             help="Public side information about items (genres, classes, …): no privacy cost. "
                                  "A MovieLens-style item table (u.item: id|title|…|0/1 genre flags) gives its "
                                  "genre flags.")
    opts: dict = {}
    if consent:
        if st.checkbox("Read the entity list from the data", key=f"{prefix}_entities_from_data",
                       help="Without a declared entity list, a DP run is refused: which entities exist would be "
                            "read off the private rows. Accept it here only if membership of an entity need not "
                            "be protected; the privacy statement then says so."):
            opts["entities_from_data"] = True
    try:
        if ents is not None:
            opts["entities"] = read_list(ents.getvalue(), what="entity list", param="entities",
                                         filename=ents.name, column=column).ids
        if feats is not None:
            opts["item_features"] = feature_table_json(read_item_features(feats.getvalue(), filename=feats.name))
    except DpfedError as exc:
        ui.show_error(exc)
        st.stop()
    return opts

if source == "sample":
    c1, c2 = st.columns(2)
    spec = c1.selectbox("Sample", list(dash.SAMPLES), format_func=dash.SAMPLES.get, key="sample_spec")
    fed = None
    if spec == "sample:clinic":
        fed = c2.selectbox("Federation key", ["hospital", "region"], key="sample_fed",
                           help="Each hospital as an entity, or hospitals grouped by region.")
    if st.button("Load sample", type="primary", key="load_sample"):
        opts = {"exclude_entities": excluded} if excluded else {}  # entities: the generator's list (public)
        if fed and fed != "hospital":
            opts["federation"] = fed
        _load(ui.load_spec, spec, json.dumps(opts, sort_keys=True),
              source_text=dash.SAMPLES[spec] + (f" (by {fed})" if fed else ""))

elif source == "movielens":
    path = st.text_input("MovieLens 100K / 1M directory", dash.default_data_path("movielens"), key="ml_path",
                         placeholder="path/to/ml-100k")
    fed = st.selectbox("Federation key", ["zip", "gender", "occupation", "age"], key="ml_fed",
                       format_func=lambda s: {"zip": "first digit of the ZIP code (as in the paper)"}.get(s, s))
    ml_public = public_inputs("ml", "Default: the key's public values (ZIP digits and “other”, u.occupation, "
                                    "genders, age bands).")
    if st.button("Load MovieLens", type="primary", key="load_ml"):
        try:
            root = dash.check_data_dir(path, "movielens")
        except DpfedError as exc:
            st.error(str(exc), icon=":material/error:")
        else:
            opts = {"federation": fed, **({"exclude_entities": excluded} if excluded else {}), **ml_public}
            _load(ui.load_spec, str(root), json.dumps(opts, sort_keys=True),
                  source_text=f"MovieLens {root.name} by {fed}", path_box=True)

elif source == "eicu":
    path = st.text_input("eICU directory (patient.csv[.gz] + event tables)", dash.default_data_path("eicu"),
                         key="eicu_path", placeholder="path/to/eicu-demo")
    c1, c2 = st.columns(2)
    tables = c1.multiselect("Event tables (items)", list(EICU_EVENT_TABLES), default=["medication"],
                            key="eicu_tables")
    entity = c2.selectbox("Federation key", ["hospitalid", "region"], key="eicu_entity")
    formulary = st.file_uploader("Formulary (optional): one item name per line", type=["txt", "csv", "gz"],
                                 key="eicu_items",
                                 help="A public item list, one name per line taken whole (commas, “|” and spaces "
                                      "belong to the name; a line in double quotes is the name inside them; a header "
                                      "line is recognised). It decides what the "
                                      "federation shares; the data's other drugs stay the hospitals' own. Without "
                                      "it a DP run selects its items by DP partition selection, charged to the "
                                      "budget.")
    eicu_public = public_inputs("eicu", "Default: the hospital table's hospitals (or its regions); hospitals "
                                        "without a stay take part with an all-zero contribution.")
    if st.button("Load eICU", type="primary", key="load_eicu"):
        try:
            root = dash.check_data_dir(path, "eicu")
        except DpfedError as exc:
            st.error(str(exc), icon=":material/error:")
            root = None
        if root is not None and not tables:
            st.error("Choose at least one table in “Event tables (items)”.", icon=":material/error:")
        elif root is not None:
            opts = {"event_table": tables if len(tables) > 1 else tables[0], "entity": entity,
                    **({"exclude_entities": excluded} if excluded else {}), **eicu_public}
            try:
                if formulary is not None:
                    opts["items"] = read_item_list(formulary.getvalue(), filename=formulary.name)[0]
            except DpfedError as exc:
                ui.show_error(exc)
                st.stop()
            _load(ui.load_spec, str(root), json.dumps(opts, sort_keys=True),
                  source_text=f"eICU {root.name} ({', '.join(tables)}) by {entity}", path_box=True)

else:
    up = ui.kept_upload(st, "Long table: one row per (user, item) interaction", dash.LONG_TABLE_TYPES, "upload")
    if up is not None:
        data = up.getvalue()
        # the control the loader's encoding errors name; "auto" is the CLI without --encoding
        text_encoding = st.selectbox(
            "Text encoding", ["auto", "utf-8", "latin-1", "cp1252", "utf-16-le", "utf-16-be"], key="upload_encoding",
            help="Auto: UTF-8, or latin-1 when the file has no UTF-8 character; UTF-16/32 with a byte-order mark "
                 "(a spreadsheet's Unicode text export) is recognised. Choose one when the file says it needs it.")
        encoding = None if text_encoding == "auto" else text_encoding
        try:
            df, no_header = dash.read_upload(data, up.name, encoding=encoding)
        except DpfedError as exc:
            ui.show_error(exc)
            st.stop()
        _known = dash.known_format(up.name, df.shape[1])
        if no_header and _known:
            st.info(f"Recognised as **{_known[0]}** (`{dash.escape_md(up.name)}`, no header line): its columns "
                    "are named as the format documents them and its first line is kept as a data row.",
                    icon=":material/info:")
        elif no_header:
            st.info("This file has **no header line** (its first line is data): its columns are called "
                    "*column 1* … and its first line is kept as a data row. Map them below.", icon=":material/info:")
        st.caption(f"{dash.escape_md(up.name)}: {len(df):,} rows, columns "
                   f"{dash.escape_md(', '.join(map(str, df.columns)))}")
        st.dataframe(df.head(8), hide_index=True)
        cols, unnamed = dash.mappable_columns(df)
        if unnamed:
            st.caption(unnamed)
        guesses = dash.guess_mapping(cols, df, no_header)
        wide = dash.wide_item_columns(cols, no_header)  # one column per item: not read, said below
        # a second table of user attributes (e.g. MovieLens u.user), joined on the user id, so the
        # entity can be a user attribute (ZIP code, occupation)
        attrs_up = ui.kept_upload(st, "User attributes (optional): one row per user, joined on the user id "
                                      "(e.g. MovieLens u.user)", dash.ATTRIBUTE_TYPES, "upload_attrs")
        attr_opts = None
        if attrs_up is not None:
            try:
                attrs, attrs_no_header = dash.read_upload(attrs_up.getvalue(), attrs_up.name, 2, "user-attribute table")
            except DpfedError as exc:
                ui.show_error(exc)
                st.stop()
            acols = [str(c) for c in attrs.columns]
            a1, a2 = st.columns([1, 3])
            attr_user = a1.selectbox("User id in the attribute table", acols, key="map_attr_user",
                                     index=acols.index(dash.guess_attribute_user(acols, attrs_no_header)))
            a2.dataframe(attrs.head(5), hide_index=True)
            attr_opts = {"data": attrs_up.getvalue(), "filename": attrs_up.name, "user_col": attr_user}
            extra = [dash.attribute_column_name(c) for c in acols if c != attr_user]
            cols = cols + extra
            if not guesses.get("entity") or guesses["entity"] not in cols:
                guesses["entity"] = dash.guess_column(extra, "zip", "region", "occupation", "hospital", "site") \
                    or extra[-1]

        def pick(label, hints, key, optional=False, help=None):
            options = ([NONE] if optional else []) + cols
            role = {"map_user": "user", "map_item": "item", "map_value": "value", "map_name": "name"}[key]
            guess = guesses.get(role)
            idx = options.index(guess) if guess in options else (0 if optional else None)
            return st.selectbox(label, options, index=idx, key=key, help=help, placeholder="choose the column")

        st.subheader("Map the columns")
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            user_col = pick("User", ("user", "user_id", "patient", "patient_id", "customer"), "map_user")
        with c2:
            item_col = pick("Item", ("item", "item_id", "movie", "product", "drug"), "map_item")
        with c3:
            value_col = pick("Value", ("value", "rating", "count", "score"), "map_value", optional=True,
                             help="(none): each row is one event / interaction.")
        with c4:
            name_col = pick("Item name (optional)", ("title", "item_name", "name"), "map_name", optional=True)

        st.subheader("Federation key")
        c1, c2, c3 = st.columns(3)
        _entity_guess = guesses.get("entity") if guesses.get("entity") in cols else None
        if _entity_guess and "map_entity" in st.session_state and st.session_state["map_entity"] is None:
            # a guess that appears with a later upload (the attribute table's ZIP column): a keyed box keeps
            # its empty value and ignores a new index, so the guess is set as its value
            st.session_state["map_entity"] = _entity_guess
            _entity_guess = None
        key_col = c1.selectbox("Entity from column", cols,
                               index=cols.index(_entity_guess) if _entity_guess else None,
                               key="map_entity", placeholder="choose the entity column",
                               help="The data holder of each row; with a user-attribute table, one of its "
                                    "columns (“attribute: …”).")
        TRANSFORMS = {"": "the value itself",
                      "first_digit": "first digit (e.g. of a ZIP code; others: one entity “other”)",
                      "first_char": "first character (whatever it is)", "prefix": "first N characters"}
        transform = c2.selectbox("Derived as", list(TRANSFORMS), format_func=TRANSFORMS.get, key="map_transform")
        prefix_n = c3.number_input("N", 1, 20, 2, key="map_prefix", disabled=transform != "prefix")

        c1, c2, c3 = st.columns(3)
        kinds = ["ratings", "counts", "implicit"]
        try:  # the same rule as the CLI: from the value column's name, never from its values
            guess, why = infer_value_kind(None, None if value_col == NONE else value_col)
        except DpfedError:
            guess, why = None, "the column's name does not say: choose"
        if st.session_state.get("map_kind_for") != value_col:  # a new value column: its own default
            st.session_state["map_kind_for"] = value_col
            st.session_state["map_kind"] = guess
        kind = c1.selectbox("Values are", kinds, key="map_kind",
                            placeholder="choose ratings, counts or implicit", help=f"Default: {why}.")
        default_max = {"ratings": 5.0, "counts": 10.0, "implicit": 1.0}.get(kind, 5.0)
        value_max = c2.number_input("Declared maximum of one value (public bound)", min_value=0.0,
                                    value=default_max, key=f"map_max_{kind}",
                                    help="A public bound, never read off the data; DP mechanisms clip to it.")
        items_up = c3.file_uploader("Item catalogue (optional): one item per line", type=["txt", "csv", "gz", "item"],
                                    key="upload_items",
                                    help="A public list of items (a formulary), one per line taken whole (commas, "
                                         "“|” and spaces belong to the name; a line in double quotes is the name "
                                         "inside them; a header line is recognised), or a "
                                         "MovieLens-style item table (u.item: id|title|…). It decides what the "
                                         "federation shares; the data's items outside it stay their entities' own. "
                                         "Without it a DP run selects which items the federation shares by a DP "
                                         "selection, charged to the budget; each entity still recommends the items "
                                         "it has rows for.")
        upload_public = public_inputs(
            "upload", "The federation, a public list: one name per line, as the entity column writes it (a line in "
                      "double quotes is the name inside them). Rows of other entities are dropped; an entity without rows "
                      "takes part with an all-zero contribution. Without it a DP run is refused unless you accept "
                      "reading the list from the data below.", consent=True,
            column=dash.source_column_name(key_col) if key_col and not transform else None)
        c1, c2, _ = st.columns(3)
        missing = c1.selectbox("Rows with a missing value", ["error", "drop"], key="map_missing",
                               format_func={"error": "stop and name the first one",
                                            "drop": "leave them out (counted in the notes)"}.get)
        _fixed = dash.fixed_duplicate_rule(kind)
        if _fixed:  # counts add up, implicit keeps one: the control shows the rule the loader applies
            c2.selectbox("Repeated (user, item) rows", [_fixed], key=f"map_dups_{_fixed}", disabled=True,
                         format_func=dash.DUPLICATE_WORDS.get, help=f"Fixed for {kind}.")
            dups = None  # the kind's own rule: a ratings rule would be refused
        else:
            dups = c2.selectbox("Repeated (user, item) rows", ["last", "mean", "error"], key="map_dups",
                                format_func=dash.DUPLICATE_WORDS.get)
        st.caption(dash.bound_rule_text(float(value_max)))

        problems = dash.mapping_problems(user_col, item_col, key_col, None if value_col == NONE else value_col,
                                         None if name_col == NONE else name_col, wide=wide)
        for prob in problems:
            st.error(prob, icon=":material/error:")
        if st.button("Build entities", type="primary", key="build_upload", disabled=bool(problems)):
            ent_transform = None if not transform else (f"prefix:{int(prefix_n)}" if transform == "prefix"
                                                        else transform)
            opts = {"user_col": user_col, "item_col": item_col,
                    "value_col": None if value_col == NONE else value_col,
                    "item_name_col": None if name_col == NONE else name_col,
                    "value_kind": kind, "value_max": float(value_max),
                    "drop_missing": missing == "drop", "duplicates": dups,
                    **({"encoding": encoding} if encoding else {}),
                    **({"exclude_entities": excluded} if excluded else {}), **upload_public}
            if items_up is not None:
                try:
                    ids, names = read_item_list(items_up.getvalue(), filename=items_up.name, column=item_col)
                    opts["items"] = {"ids": ids, "names": names}  # a u.item table's titles too, as the CLI reads it
                except DpfedError as exc:
                    ui.show_error(exc)
                    st.stop()
            if ent_transform is None:
                opts["entity_col"] = key_col
            else:
                opts["entity_from"] = key_col
                opts["entity_transform"] = ent_transform
            _load(ui.load_upload_job, data, up.name, json.dumps(opts, sort_keys=True), no_header, attr_opts,
                  source_text=f"upload {up.name}" + (f" + {attrs_up.name}" if attrs_up is not None else ""))

# ----------------------------------------------------------------------------- the loaded data
st.divider()
ds = ui.get_dataset(auto_default=True)
if ds is None:
    st.stop()
st.subheader(f"Loaded: {dash.escape_md(st.session_state.get(ui.DATASET_SOURCE, ds.name))}")
ov = dash.dataset_overview(ds)
c = st.columns(5)
c[0].metric("Users", f"{ov['users']:,}")
c[1].metric("Items", f"{ov['items']:,}")
c[2].metric("Entities", ov["entities"])
c[3].metric("Density", f"{ov['density']:.2%}")
c[4].metric(f"Max value ({ov['value_kind']})", f"{ov['value_max']:g}",
            help="The declared public bound of one value; DP mechanisms clip to it.")
if getattr(ds, "entity_source", "declared") == "data":
    st.warning("The entity list is read from the data" + (
        ": accepted — membership of an entity is not protected." if ds.entities_accepted else
        ": DP runs are refused until you declare it (“Declared entity list”) or accept it (“Read the entity list "
        "from the data”)."), icon=":material/warning:")
_forecast = dash.catalogue_forecast_text(ds, ui.current_config(ds))
if _forecast:
    st.info(dash.friendly_text(_forecast) + " (at the Federate page's current settings).", icon=":material/info:")
if ds.item_features is not None:
    st.caption(f"Public item features: {ds.item_features.shape[1]} columns "
               f"({dash.escape_md(', '.join(ds.item_feature_names[:6]))}{' …' if ds.item_features.shape[1] > 6 else ''}).")
for note in ds.notes:
    st.info(dash.friendly_text(note), icon=":material/info:")
warn = dash.small_entity_warning(ds, test_fraction=st.session_state.get("fed_test_fraction"))
if warn:
    st.warning(warn, icon=":material/warning:")
table = dash.entity_table(ds)
st.dataframe(
    table, hide_index=True,
    column_config={
        "entity": "entity", "users": "users", "items_used": "items used",
        "interactions": "interactions",
        "density": st.column_config.NumberColumn("density", format="percent"),
        "too_small": st.column_config.CheckboxColumn("too small?"),
    },
)
st.page_link(ui.PAGES["federate"], label="Next: federate these entities", icon=":material/hub:")
