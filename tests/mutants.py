"""Mutation runner for the DP tests: ``make mutants`` (also run by ``.ci/run``).

Each mutant is one deliberate bug — a privacy bug, or (a section of their own) a wrong quality number,
verdict or site model — an edit of the syntax tree of one function, given as a code pattern and its
replacement (:class:`Mutant`), so no production line is formatted for the runner.
The runner copies the engine and the tests to a temporary directory (the working tree is never
touched), applies each edit there, and runs only the DP tests aimed at it. A mutant is *killed* when
those tests fail (pytest exit code 1); it *survives* when they pass. The runner fails if any mutant
survives, if a mutant's text is no longer found in the source (the list went stale), or if a test that
killed a mutant fails on the unmutated copy too (such a test catches nothing: the baseline).
``tests/test_mutants_runner.py`` checks the edits themselves.

Every summable method of the engine (``dpfed_core``) is covered: each call of ``self.gaussian_share``
in its class gets a generated mutant (:func:`summable_share_mutants`: the sensitivity it states
halved, aimed at the release audit of that method), so a new method needs no line here; a method
that draws its noise otherwise needs a mutant written below, and
``tests/test_mutants_runner.py`` fails naming any built-in summable method without one.

Usage: ``python tests/mutants.py [--list] [--only NAME ...] [--jobs N]``. Each mutant's tests run in a
forked child of an interpreter that has the third-party libraries imported (``tests/pytest_forkserver.py``),
one mutant per core at a time, each worker in its own copy of the engine (the mutated file put back after
each mutant).
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest_forkserver

REPO = Path(__file__).resolve().parents[1]

DPP = "dpfed_core/federation/dp_prototypes.py"
PMECH = "dpfed_core/federation/prototype_mechanisms.py"
MECH = "dpfed_core/privacy/mechanisms.py"
PROTO = "dpfed_core/federation/protocol.py"
NB = "tests/test_dp_neighbours.py"
NOISE = "tests/test_noise.py"
MECHT = "tests/test_mechanisms.py"
REC = f"{NOISE}::test_noise_every_draw_has_the_scale_the_ledger_recorded"
CORE = "dpfed_core/federation/coresets.py"
CORET = "tests/test_coresets.py"
SUMM = "dpfed_core/federation/summable.py"
COT = "tests/test_cooccurrence.py"
REL = "tests/test_release_audits.py"
CAT = "dpfed_core/privacy/catalogue.py"
SCAT = "tests/test_secure_catalogue.py"
ACC = "dpfed_core/privacy/accounting.py"
ACCT = "tests/test_accounting.py"
FPM = "dpfed_core/privacy/fingerprint.py"
FPT = "tests/test_fingerprint.py"
ODO = "dpfed_core/privacy/odometer.py"
BREC = "dpfed_core/privacy/budget_records.py"
BREL = "tests/test_budget_releases.py"
KILLED_RUN = f"{BREL}::test_a_run_killed_outright_has_its_releases_settled_as_failed_and_charged_by_the_next_charge"
SITE = "dpfed_core/deployment/site_policy.py"
SITET = "tests/test_site_policy.py"
SITE_COALITION = ("tests/test_deployment_apps.py::test_a_sites_coalition_epsilon_counts_the_catalogues_share_and_"
                  "states_the_coordinators_figure")
PLANNED_RHO = f"{ACCT}::test_a_method_is_planned_by_its_rho_when_every_release_is_gaussian"
COALITION_PLAN = (f"{SITET}::test_the_coalition_cap_is_decided_on_the_run_as_planned_from_public_parameters_"
                  "alone")
MALFORMED_SHARE = ("tests/test_deployment_apps.py::test_a_malformed_share_request_marks_nothing_drawn_and_a_drawn_"
                   "stage_stays_marked")
FAILURE_TEXT = ("tests/test_deployment_apps.py::test_what_a_site_tells_the_coordinator_of_a_failure_holds_no_count_"
                "of_its_own_items_nor_its_paths")
CLIENT = "dpfed_core/deployment/client_app.py"
ATOMIC = "dpfed_core/data/atomic.py"
ODD = "tests/test_intake_odd_inputs.py"
ROWS_IN_ONE_FIELD = (f"{ODD}::test_rows_read_into_one_quoted_field_are_named_on_both_front_ends_and_a_cell_with_a_"
                     "line_break_is_kept")
HOOKS = "dpfed_core/deployment/hooks.py"
NODE_STREAMS = f"{NOISE}::test_a_node_draws_production_noise_from_os_entropy_and_seeded_noise_only_in_simulation"
NODE_REQUEST = f"{SITET}::test_a_node_releases_only_the_request_it_accepted_and_each_stage_once"
ROW_BOUND = "tests/test_dp_prototypes.py::test_every_row_a_sum_reads_has_norm_at_most_the_public_bound"
COALITION = "tests/test_secure_catalogue.py::test_the_coalition_guarantee_of_a_secure_run_counts_the_catalogues_share"
DASH_GUARANTEE = ("tests/test_privacy_labels.py::"
                  "test_the_dashboards_guarantee_carries_the_float_sampler_note_and_every_warning")
BUDGET_LINE = "tests/test_budget_ui.py::test_the_budget_line_names_the_most_spent_entity_and_the_non_private_releases"
SITE_COMMAND = f"{SITET}::test_the_site_command_states_the_spend_on_epsilon_and_delta_and_a_voided_guarantee"
CLI_RUN_PRINTS = "tests/test_cli.py::test_a_run_prints_its_trust_model_and_every_warning_of_its_document"
LOCAL_SEARCH_ROWS = f"{NB}::test_local_search_rows_state_what_one_user_moves_every_utility_by"
STAGE_ROWS = "tests/test_dp_prototypes.py::test_dp_ledger_rows_name_every_stage"
FORECAST = "tests/test_site_items.py::test_the_forecast_is_the_runs_own_threshold_and_its_chance_of_clearing_it"
PRODUCTION_HINT = "tests/test_cost.py::test_a_production_run_is_predicted_with_its_noise_draws_and_a_simulation_without"
ONE_WORD = "tests/test_verdicts.py::test_one_entitys_word_is_the_counts_rule"
SHARED_ITEMS_HINT = "tests/test_cost.py::test_a_runs_shape_carries_the_selections_forecast_when_no_catalogue_is_declared"
FINGERPRINT = "tests/test_code_version.py::test_the_fingerprint_moves_with_the_engines_code_and_pins_only"
SITE_NON_PRIVATE = f"{SITET}::test_a_non_private_run_a_site_allows_voids_its_budget_whatever_epsilon_the_request_names"
SITE_BOUNDS = f"{SITET}::test_every_public_bound_of_the_run_and_the_shards_own_bound_lie_within_value_bounds"
SITE_DERIVED = f"{SITET}::test_value_bounds_bind_the_row_bound_a_method_derives_when_the_run_names_none"
BAD_PARAMETER = ("tests/test_deployment_apps.py::test_a_request_whose_method_parameter_is_invalid_is_refused_naming_"
                 "it_and_charges_nothing")
SITE_DELTA = f"{SITET}::test_a_site_charges_the_requests_delta_and_keeps_the_delta_budget_its_policy_states"
SETUP_DROPOUTS = f"{SITET}::test_a_secure_sums_setup_follows_the_runs_dropouts_within_the_sites"
SITE_WITHDRAWS = (f"{SITET}::test_a_site_withdraws_by_itself_from_a_run_left_hanging_only_when_its_store_says_it_"
                  "drew_nothing")
STRICT_DEFAULTS = f"{SITET}::test_a_request_within_every_rule_is_accepted_and_the_defaults_are_strict"
SHARDS = "dpfed_core/deployment/shards.py"
LAUNCHER = "dpfed_core/deployment/launcher.py"
METRICS = "dpfed_core/evaluation/metrics.py"
NODE_SITE_RULES = f"{SITET}::test_each_rule_refuses_what_it_forbids_and_names_itself"
NODE_SITE_BUDGET = f"{SITET}::test_the_budget_binds_across_runs_in_the_sites_own_odometer"
NODE_SITE_SIM_CHARGE = f"{SITET}::test_each_acceptance_in_the_sites_log_states_the_charge_its_odometer_holds"
NODE_SITE_CATALOGUE = ("tests/test_deployment_apps.py::test_a_site_with_a_declared_catalogue_refuses_a_run_that_"
                        "selects_one_from_its_columns")
NODE_SITE_OWN_ITEMS = ("tests/test_deployment_apps.py::test_a_site_whose_items_come_from_its_data_refuses_a_dp_run_"
                        "that_calls_them_declared")
NODE_SITE_SECAGG_RUN = (f"{SITET}::test_a_site_allowing_dropouts_sums_only_within_the_dropouts_its_run_sized_the_"
                         "noise_for")
NODE_SITE_SECAGG_RULE = f"{SITET}::test_secagg_key_shares_follow_a_public_rule_that_grows_slower_than_the_sites"
NODE_SITE_SECAGG_SITES = f"{SITET}::test_a_site_sums_only_with_the_sites_it_accepted_the_run_with"
NODE_SITE_UNMASK = ("tests/test_deployment_apps.py::test_a_site_never_reveals_both_key_shares_of_one_node_nor_"
                     "unmasks_a_sum_short_of_its_noise")
NODE_SITE_BAD_POLICY = f"{SITET}::test_a_bad_policy_file_is_one_error_naming_the_key"
NODE_SITE_SHARDS = "tests/test_deployment.py::test_shards_hold_one_entity_each_and_bad_paths_say_how_to_fix"
NODE_SITE_SHARD_ONLY = ("tests/test_deployment_inputs.py::test_a_sites_export_writes_its_own_shard_only_in_a_"
                         "federation_listing_each_site_once")
NODE_SITE_SHARD_FORMAT = ("tests/test_deployment_inputs.py::test_a_shard_of_another_format_is_refused_and_its_"
                           "declared_catalogue_read_back")
NODE_SITE_SHAMIR = "dpfed_core/deployment/shamir.py"
NODE_SITE_SHAMIR_REFUSED = "tests/test_deployment_shamir.py::test_duplicate_or_zero_index_is_refused"
NODE_SITE_SHAMIR_EQUAL = "tests/test_deployment_shamir.py::test_combine_chunk_equals_pycryptodome_for_every_subset_shape"
NODE_SITE_GF128 = "tests/test_deployment_shamir.py::test_simulation_arithmetic_is_bit_identical_to_pycryptodome"
NODE_SITE_CA = ("tests/test_deployment_inputs.py::test_the_runs_ca_signs_the_server_certificate_and_no_further_"
                 "authority")
NODE_SITE_NODE_KEY = "tests/test_deployment_inputs.py::test_a_node_key_other_than_a_nist_curve_key_is_refused"
NODE_SITE_ARGV = ("tests/test_deployment_inputs.py::test_each_supernode_is_started_with_its_own_shard_policy_and_key_"
                   "and_checks_the_superlinks_certificate")
NODE_SITE_SITE_CMD = f"{SITET}::test_the_site_command_names_what_is_wrong_and_never_creates_a_store"
NODE_SITE_OUT_DIR = "tests/test_deployment_inputs.py::test_write_shards_to_a_file_names_out_dir_before_reading_the_data"
NODE_SITE_FOLDER_PATHS = ("tests/test_deployment_inputs.py::test_a_data_path_or_features_path_naming_a_folder_is_said_"
                           "to_be_a_folder")
NODE_SITE_DEPLOYED = "dpfed_core/deployment/deployed.py"
NODE_SITE_OWN_POLICIES = ("tests/test_deployment_apps.py::test_each_sites_own_policy_and_store_folder_are_checked_"
                           "before_anything_starts")
NODE_SITE_SHARED_POLICY = ("tests/test_deployment_apps.py::test_a_run_every_local_site_would_refuse_is_one_error_"
                            "naming_the_flag_before_anything_starts")
NODE_SITE_ROW_BOUND = ("tests/test_deployment_apps.py::test_a_row_bound_the_method_derives_is_checked_against_"
                        "value_bounds_before_anything_starts")
NODE_SITE_SERVER = "dpfed_core/deployment/server_app.py"
NODE_SITE_IDENTIFY = ("tests/test_deployment_apps.py::test_the_server_orders_replies_by_entity_and_counts_a_dropped_"
                       "entity_as_present")
NODE_SITE_DECISIONS = ("tests/test_deployment_apps.py::test_a_site_that_does_not_decide_stops_the_run_before_any_"
                        "share_and_the_others_get_their_charge_back")
RANK_DEFS = "tests/test_metrics.py::test_ranking_metrics_are_the_definitions_computed_item_by_item"
POOLED = "tests/test_metrics.py::test_entity_metrics_pool_entries_and_average_over_test_users_only"
VERDICTS = "dpfed_core/evaluation/verdicts.py"
VERDICTT = "tests/test_verdicts.py"
ONE_SEED = f"{VERDICTT}::test_one_seed_has_no_spread_so_no_sd_no_crossing_and_no_verdict_against_dp_popularity"
SWEEP_VERDICT = f"{VERDICTT}::test_the_sweep_verdict_counts_an_entity_only_beyond_the_t_interval_of_its_seeds"
BLEND = "dpfed_core/models/blend.py"
BLENDT = "tests/test_blend.py"
BLEND_WEIGHTS = f"{BLENDT}::test_a_sites_scores_are_its_unit_parts_at_the_weights_it_reports"
KNOWN_ONLY = f"{BLENDT}::test_with_known_items_only_the_holdout_cannot_see_what_the_federation_says_of_held_out_items"
BLEND_NO_HOLDOUT_USERS = f"{BLENDT}::test_a_holdout_without_users_ranks_every_blend_as_random"
BLEND_SITE_FITS = f"{BLENDT}::test_site_fits_hand_out_copies_and_evict_as_many_as_the_bound_needs"
BLEND_SAMPLE_CAPS = f"{BLENDT}::test_the_hold_out_samples_users_and_items_only_above_their_caps"
BLEND_FED_ONLY = (f"{BLENDT}::test_without_its_own_parts_a_small_site_keeps_the_federations_factors_and_popularity_"
                  "at_equal_weight")
SPLIT = "dpfed_core/data/split.py"
SPLITT = "tests/test_split.py"
LT = "dpfed_core/data/long_table.py"
INP = "dpfed_core/data/inputs.py"
TABLES = "dpfed_core/data/tables.py"
UPLOAD = "dpfed_core/data/upload.py"
CONFIG = "dpfed_core/config.py"
RULES = "tests/test_intake_rules.py"
EXCLUDED = f"{RULES}::test_every_excluded_entity_is_left_out_as_written_around_spaces"
RCT = "tests/test_run_config.py"
EPS_LIMITS = f"{RCT}::test_epsilon_limits_are_inclusive_and_just_beyond_them_refused"
OUT_OF_RANGE = f"{RCT}::test_a_value_outside_its_range_is_refused"
RIDGE = f"{RCT}::test_ridge_penalty_from_zero_to_its_maximum_is_accepted"
SEED = f"{RCT}::test_the_largest_seed_is_accepted_and_a_bad_one_names_the_seed"
LEDGER = "dpfed_core/privacy/ledger.py"
LEDGERT = "tests/test_ledger.py"
STORE = "dpfed_core/privacy/store.py"
ODOT = "tests/test_odometer.py"
REC_PAGE = "pages/4_Recommend.py"
EVAL_PAGE = "pages/3_Evaluate.py"
UI_WIDGETS = "dpfed_core/ui/widgets.py"
WIDT = "tests/test_widgets.py"
DATA_SCRIPT = "pages/1_Data.py"
STATEMENT = ("tests/test_dashboard_engine.py::test_the_privacy_statement_says_each_assumption_and_condition_the_run_"
             "document_records")
PAGE_CHARGE = ("tests/test_dashboard_pages.py::test_a_federate_run_is_charged_to_the_owners_store_and_a_non_private_"
               "one_past_a_cap_needs_the_checkbox")
TRADE_PAGE = "pages/5_Trade-off.py"
TRADE_VERDICT = ("tests/test_dashboard_pages.py::test_the_tradeoff_verdict_is_stated_at_epsilon_one_of_the_grid_and_a_"
                 "changed_grid_is_said")
TRADE_REFUSED = ("tests/test_page_controls.py::test_the_tradeoff_page_refuses_a_reference_the_sweep_would_refuse_"
                 "before_its_button")
AUDIT_POWER_REFUSED = "tests/test_audit.py::test_a_power_check_that_does_not_shrink_the_noise_is_refused_before_the_audit"
PLANNER_SEEDS = ("tests/test_planner.py::test_the_users_planner_refuses_fewer_than_two_seeds_rather_than_state_a_spread_"
                 "of_zero")
HIST_PAGE = "pages/8_History.py"
AUDPAGE = "pages/7_Privacy_audit.py"
AUDPT = "tests/test_page_audit.py"
HIST = ("tests/test_dashboard_pages.py::test_the_history_page_filters_by_kind_reopens_runs_sweeps_and_audits_where_they_"
        "are_shown_and_deletes")
FED_PAGE = "pages/2_Federate.py"
EVAL_NO_TEST_USERS = "tests/test_dashboard_pages.py::test_evaluate_says_no_entity_has_test_users_instead_of_crashing"
FED_TRUST = ("tests/test_dashboard_pages.py::test_the_federate_page_runs_the_trust_model_its_toggle_shows_and_none_"
             "for_a_prototype_method")
REC_PAGE_TEST = "tests/test_app_pages.py::test_recommend_matches_engine"
EVAL_PAGE_TEST = ("tests/test_dashboard_pages.py::test_the_evaluate_page_charges_comparisons_as_comparisons_states_no_"
                  "epsilon_for_local_and_stops_at_a_refusal")
METHOD_BOX = ("tests/test_dashboard_engine.py::test_the_method_box_opens_on_the_recommended_method_and_its_parameters_"
              "leave_the_budget_split_to_its_own_control")
WIPED = f"{ODOT}::test_a_store_emptied_beside_its_key_is_refused_as_a_lost_history_not_read_as_a_new_budget"
BUDGET = "dpfed_core/evaluation/budget.py"
PLANNER = "dpfed_core/evaluation/planner.py"
PLANT = "tests/test_planner.py"
BOUNDS = "dpfed_core/audit/lower_bounds.py"
MEMB = "dpfed_core/audit/membership.py"
AUDT = "tests/test_audit.py"
BASIC_DELTA = f"{LEDGERT}::test_basic_composition_adds_every_rows_delta"
ZCDP_CHOICE = f"{LEDGERT}::test_zcdp_is_used_only_when_tighter_and_adds_the_other_rows_epsilon"
ACCOUNTANT_OF = f"{LEDGERT}::test_the_accountant_is_the_worst_entitys_and_basic_rows_say_basic"
ENTITY_SUMS = f"{LEDGERT}::test_per_entity_per_stage_and_remaining_state_each_entitys_own_sums"
NEGATIVE_SPEND = f"{LEDGERT}::test_a_negative_delta_or_rho_is_refused"
STORE_WRITE = f"{ODOT}::test_a_write_is_durable_checks_references_and_holds_the_write_lock_from_its_start"
USERS_NEEDED = f"{PLANT}::test_users_needed_measures_the_advantage_per_metric_direction_with_the_sample_sd"
VERDICT_EDGES = f"{AUDT}::test_a_bound_equal_to_the_claim_is_no_violation_and_a_claim_at_the_ceiling_is_inconclusive"
FOUR_RUNS = f"{AUDT}::test_fewer_than_four_runs_per_class_are_refused_by_every_entry_of_the_audit"
LR_CEILING = f"{AUDT}::test_the_lr_attacks_ceiling_is_that_of_the_runs_it_certifies_on"
AUDIT_FAMILIES = f"{AUDT}::test_each_methods_family_counts_the_attacks_it_runs_and_the_config_states_the_largest"
FAILED_POWER = f"{AUDT}::test_a_power_check_that_sees_nothing_turns_a_consistent_verdict_inconclusive"
SUMMARY_LARGEST = (f"{AUDT}::test_the_summary_reports_the_largest_verbatim_share_and_the_largest_resolvable_tpr_"
                   "of_any_row")
FACTOR = "dpfed_core/models/factorization.py"
FACTORT = "tests/test_factorization.py"
EFAC = "dpfed_core/models/entity_factors.py"
SIDE = "dpfed_core/models/side_information.py"
SIDET = "tests/test_public_inputs.py"
ALS = "dpfed_core/federation/dp_als.py"
ALST = "tests/test_dp_als.py"
PROTOS = "dpfed_core/federation/prototypes.py"
PROTOT = "tests/test_protocol.py"
CATRUN = "dpfed_core/evaluation/catalogue_run.py"
CATFC = "dpfed_core/evaluation/catalogue_forecast.py"
SITEMS = "tests/test_site_items.py"
ROW_FIT_STOP = f"{FACTORT}::test_the_row_fit_stops_relative_to_the_largest_factor_so_tiny_values_are_fitted_exactly"
ROWS_GIVEN_DEFAULTS = f"{FACTORT}::test_round_twos_row_fit_with_its_defaults_is_the_exact_ridge_nnls"
OUTSIDE_MODEL = "tests/test_entity_factors.py::test_entity_rows_and_local_items_outside_the_model_are_refused"
ON_KEYS = ("tests/test_entity_factors.py::"
           "test_on_keys_gives_each_item_its_keys_factors_own_columns_included_and_none_without_a_key")
SMOOTHING = f"{SIDET}::test_smoothing_reads_features_as_memberships_and_averages_an_items_feature_means"
ALS_ZERO_STATS = f"{ALST}::test_zero_mode_statistics_are_the_per_user_sums_of_the_module_doc"
ALS_SERVER = (f"{ALST}::test_the_server_learns_on_the_most_popular_items_from_the_unit_popularity"
              "_and_a_ridge_over_the_noise")
SELECTION_RANGES = f"{SCAT}::test_the_selections_parameters_outside_their_ranges_are_refused"
KEY_MAPS = f"{SCAT}::test_key_matrix_and_item_axis_map_every_item_of_a_released_key_key_zero_included"
DIVISOR_COALITION = (f"{SCAT}::test_the_catalogues_divisor_and_coalition_count_the_dropouts"
                     "_and_the_most_exposed_entity")
SELECTION_FIRST = f"{SITEMS}::test_the_selections_messages_ledger_rows_and_note_come_first"
PER_ENTITY_FORECAST = (f"{SITEMS}::test_the_per_entity_forecast_is_each_entitys_own_threshold"
                       "_and_chance_of_clearing_it")
FEATURES = "dpfed_core/data/features.py"
DATASET = "dpfed_core/data/dataset.py"
SYNTH = "dpfed_core/data/synthetic.py"
SAMPLES_PY = "dpfed_core/data/samples.py"
MOVIELENS = "dpfed_core/data/movielens.py"
EICU = "dpfed_core/data/eicu.py"
RFORMAT = "dpfed_core/reporting/report_format.py"
RFIGURES = "dpfed_core/reporting/report_figures.py"
PLOTS = "dpfed_core/reporting/plots.py"
CLI_ARGS = "dpfed_core/cli/args.py"
REPORT_CMD = "dpfed_core/cli/report_cmd.py"
DEPLOY_CMD = "dpfed_core/cli/deploy_cmd.py"
UI_ENGINE = "dpfed_core/ui/engine.py"
UI_CATALOGUE = "dpfed_core/ui/catalogue.py"
LOADERT = "tests/test_loaders.py"
LISTST = "tests/test_intake_lists.py"
UPLOADT = "tests/test_upload.py"
HEADERLESS_TEXT = f"{UPLOADT}::test_a_header_less_text_column_after_user_and_item_is_the_entity_not_the_value"
WHOLE_UNIX_TIMES = f"{UPLOADT}::test_a_column_is_a_timestamp_only_when_every_value_is_a_whole_unix_time"
BY_NAME_ONLY = f"{UPLOADT}::test_value_and_item_are_proposed_only_by_name_never_as_the_first_free_column"
VALUE_NAME_ROLES = f"{UPLOADT}::test_the_value_or_the_item_name_cannot_be_the_item_or_the_user_column"
ENTITY_ROLES = f"{UPLOADT}::test_the_entity_cannot_be_the_user_or_the_item_column"
UPLOAD_BOUNDS = "tests/test_upload_bounds.py"
LOADERS = "dpfed_core/data/loaders.py"
TABLEREAD_READING = "tests/test_intake_reading.py"
PUBLIC_LISTS = (f"{LOADERT}::test_load_data_reads_a_movielens_1m_directory_and_a_samples_or_movielens_entity_list_"
                "is_public")
SYNTHETIC_SPEC = (f"{LOADERT}::test_synthetic_data_is_seeded_by_default_the_paper_preset_applies_and_a_wrong_option_"
                  "is_named")
SYNTHT = "tests/test_synthetic.py"
SYN_SEED = f"{SYNTHT}::test_an_int_seed_reproduces_the_data_and_another_seed_or_none_draws_other_data"
SYN_VARIED = f"{SYNTHT}::test_varied_sizes_round_floored_log_normal_weights_by_largest_remainders"
SYN_WEIGHTS = f"{SYNTHT}::test_weights_of_another_length_or_not_all_positive_and_finite_are_refused"
SYN_LIMITS = f"{SYNTHT}::test_parameters_at_or_beyond_their_limits_are_refused_by_name"
SYN_SD = f"{SYNTHT}::test_the_interaction_term_has_the_stated_sd_whatever_the_rank_and_the_entity_effect"
SYN_RATES = f"{SYNTHT}::test_counts_are_poisson_at_the_rates_of_the_returned_factors"
SYN_DENSITY = f"{SYNTHT}::test_the_density_target_is_met_with_strong_entity_item_offsets"
SYN_CLINIC = (f"{SYNTHT}::test_a_clinic_has_every_patient_asked_for_one_preferred_item_per_substitute_group_and_"
              "hospitals_from_01")
SYN_SUBSTITUTES = (f"{SYNTHT}::test_substitutes_share_their_leaders_rates_and_hospital_sizes_round_by_largest_"
                   "remainders")
SYN_SPECIALTY = f"{SYNTHT}::test_the_specialty_centres_are_the_largest_hospitals"
SYN_REEXPORT = (f"{SYNTHT}::test_a_reexport_holds_the_same_people_under_new_names_with_only_the_changes_asked_"
                "for")
REPORTT = "tests/test_report.py"
DASHT = "tests/test_dashboard_engine.py"
CLIT = "tests/test_cli.py"
AUDIT_TARGETS = "dpfed_core/audit/targets.py"
AUDIT_COST = "dpfed_core/audit/cost.py"
AUDIT_CMD = "dpfed_core/cli/audit_cmd.py"
PAPER_DIFF = "dpfed_core/reporting/paper.py"
AUDIT_TIME_PARTS = (f"{AUDT}::test_the_time_estimate_discards_the_warm_up_and_extrapolates_each_methods_fixed_and_"
                    "per_run_seconds")
AUDIT_CLI_RUNS = (f"{AUDT}::test_the_audit_command_passes_its_defaults_and_flags_to_the_audit_and_warns_of_a_"
                  "violation")
PAPER_FOLLOWS = f"{REPORTT}::test_the_paper_differences_follow_the_runs_epsilon_k_and_method"
NAME_KEYS = f"{LISTST}::test_name_features_keep_only_keys_two_or_more_items_share"
ENTITY_SUMMARY = f"{LOADERT}::test_the_summary_counts_each_entitys_users_items_used_interactions_and_density"
ML_REPEATS = f"{LOADERT}::test_movielens_files_that_repeat_a_user_or_a_movie_are_refused"
REPORT_NUMBERS = f"{REPORTT}::test_every_number_reads_one_way_and_document_text_is_escaped"
AUDIT_FIGURES = (f"{REPORTT}::test_the_audit_figures_label_non_private_runs_pick_a_target_by_kind_and_draw_infinity_"
                 "right_of_the_grid")
REPORT_COMMAND = f"{REPORTT}::test_the_report_command_takes_a_metric_of_the_run_and_writes_the_public_version_when_asked"
METRIC_BARS = (f"{DASHT}::test_grouped_bars_up_to_the_limit_with_overall_last_and_dots_beyond_sorted_by_the_first_"
               "method")
TRADEOFF_CHART = (f"{DASHT}::test_the_trade_off_chart_draws_mean_and_sd_along_sorted_epsilon_and_infinity_right_of_"
                  "the_grid")
HEATMAPS = f"{DASHT}::test_heatmaps_show_the_items_of_largest_mass_with_labels_cut_to_their_width"
USER_LIST = f"{DASHT}::test_a_users_list_ranks_from_one_and_marks_exactly_their_hidden_items"
NUMBER_FLAGS = f"{CLIT}::test_list_and_number_flags_accept_their_whole_range_and_refuse_an_empty_entry"
RUN_LIMITS = f"{CLIT}::test_run_settings_at_their_limits_are_accepted_and_beyond_them_named"
WIRE = "dpfed_core/deployment/wire.py"
WIRET = "tests/test_wire.py"
WIRE_JSON = f"{WIRET}::test_infinities_travel_as_signed_strings_and_nan_as_null_at_any_depth"
RUN_JSON = f"{WIRET}::test_the_run_json_states_how_the_catalogue_is_fixed_and_a_declared_catalogues_size_only"
SPROT = "dpfed_core/federation/summable_protocol.py"
ROUNDING = "tests/test_share_rounding.py"
ROUNDING_RUN = f"{ROUNDING}::test_a_runs_grid_steps_are_its_smallest_share_noise_and_too_few_are_a_warning"
ROUNDING_CATALOGUE = f"{ROUNDING}::test_a_dp_catalogues_shares_count_among_the_runs_grid_steps"
SUMT = "tests/test_summable.py"
PUBLIC_BOUNDS = "tests/test_method_contract.py::test_a_methods_public_bounds_are_the_bounds_its_release_applies"
STAGE_SUMS = f"{SUMT}::test_each_stage_sums_every_entitys_share_and_the_next_reads_only_the_declared_broadcast"
THREADED = f"{SUMT}::test_shares_made_in_threads_spend_the_same_rows_in_order_and_sum_the_same"
SUMNOISE = "tests/test_sum_noise.py"
ONCE_SCALE = f"{SUMNOISE}::test_an_in_process_production_run_draws_each_secure_release_once_at_the_summed_scale"
ONCE_BITS = f"{SUMNOISE}::test_the_released_sum_is_opendps_draw_on_the_exact_sum_and_nothing_else"
ONCE_REFUSED = f"{SUMNOISE}::test_a_release_whose_shares_differ_in_shape_number_or_reach_is_refused"
ONCE_CATALOGUE = f"{SUMNOISE}::test_a_run_without_a_declared_catalogue_draws_the_histogram_as_its_method_draws"
NOISE_PY = "dpfed_core/privacy/noise.py"
ROUNDING_CHARGED = f"{NOISE}::test_the_float_maps_charge_the_rounding_of_every_coordinate_to_the_grid"
PARTITION_THRESHOLD = (f"{NOISE}::test_partition_selection_keeps_exactly_the_keys_whose_noisy_count_reaches_its_"
                       "threshold")
ZCDP_EDGES = (f"{NOISE}::test_a_zcdp_budget_has_no_finite_epsilon_at_a_delta_outside_zero_one_and_no_rho_is_given_"
              "for_one")
EPS_NOT_BELOW = f"{NOISE}::test_the_epsilon_of_a_rho_is_never_below_opendps_conversion_of_that_rho"
NO_SIGMA = f"{NOISE}::test_no_sigma_is_planned_for_a_rho_of_zero_or_less_and_an_infinite_rho_needs_none"
NO_ROWS = f"{NOISE}::test_a_selection_over_no_rows_selects_nothing_in_the_shape_of_k"
NO_FINITE = f"{NOISE}::test_a_max_over_no_finite_utility_is_refused"
FLOAT_COUNTS = f"{NOISE}::test_whole_counts_held_as_floats_are_released_as_integers_noised_or_exact"
EACH_DRAW = (f"{SUMNOISE}::test_each_draw_of_a_share_joins_the_same_draw_of_every_other_share_and_no_sum_of_"
             "nothing_is_drawn")
POOLED_PRODUCTION = f"{SUMNOISE}::test_a_pooled_stream_is_a_production_stream_and_its_sum_is_drawn_by_opendp"
INTAKEP = "tests/test_intake_pages.py"
UNREAD_EXCLUSION = f"{INTAKEP}::test_a_leave_out_entry_that_cannot_be_read_stops_the_page_at_its_error"
ML_PAGE = f"{INTAKEP}::test_movielens_loads_by_the_key_chosen_with_the_public_item_features_given"
EICU_PAGE = (f"{INTAKEP}::test_eicu_loads_every_event_table_chosen_by_the_key_chosen_and_the_declared_"
             "entities")
UPLOAD_RULES = (f"{INTAKEP}::test_an_upload_is_built_with_the_missing_value_repeat_and_item_name_rules_chosen_"
                "and_its_cli_says_them")
UPLOAD_OPTIONS = ("{'user_col': user_col, 'item_col': item_col, 'value_col': None if value_col == NONE else value_col, "
                  "'item_name_col': None if name_col == NONE else name_col, 'value_kind': kind, "
                  "'value_max': float(value_max), 'drop_missing': missing == 'drop', 'duplicates': dups, "
                  "**({'encoding': encoding} if encoding else {}), "
                  "**({'exclude_entities': excluded} if excluded else {}), **upload_public}")
BAD_FEATURES_PAGE = f"{INTAKEP}::test_upload_bad_features_name_the_control"
DECLARED_PAGE = f"{INTAKEP}::test_upload_declared_entities_features_and_consent"
ATTRIBUTE_JOIN_PAGE = "tests/test_dashboard_advice.py::test_data_page_joins_user_attributes_and_federates_by_occupation"
COUNTS_RULES = (f"{INTAKEP}::test_counts_are_bounded_at_ten_by_default_and_their_repeats_add_up_whatever_a_"
                "ratings_rule_said")
#: the Data page's loader options for MovieLens and eICU, as the syntax tree writes them
ML_OPTIONS = "{'federation': fed, **({'exclude_entities': excluded} if excluded else {}), **ml_public}"
EICU_OPTIONS = ("{'event_table': tables if len(tables) > 1 else tables[0], 'entity': entity, "
                "**({'exclude_entities': excluded} if excluded else {}), **eicu_public}")
TRUST = f"{SUMT}::test_the_trust_record_states_both_guarantees_and_where_the_sum_was_formed"
MESSAGE_LOG = f"{SUMT}::test_the_message_log_of_a_summable_run_lists_each_message_with_its_round_and_direction"
PARTICIPANTS = (f"{SUMT}::test_a_secure_sum_is_released_with_every_entity_but_the_tolerated_dropouts"
                "_and_never_fewer")
FUSED = f"{SUMT}::test_a_stage_joins_the_previous_sum_only_when_both_lengths_are_known_ahead"
SERVER = "dpfed_core/deployment/server_app.py"
NODE_RT = "dpfed_core/deployment/node_runtime.py"
NODET = "tests/test_node_runtime.py"
TASK_ORDER = f"{NODET}::test_a_nodes_clientapp_task_starts_only_once_its_earlier_one_has_exited"
FLOWER_INT = "dpfed_core/deployment/flower_internals.py"
ERRORS = "dpfed_core/errors.py"
SIM_ENGINE = "dpfed_core/deployment/simulation_engine.py"
INPROC = "dpfed_core/deployment/inprocess_backend.py"
CLI_LINE = "tests/test_cli.py::test_the_dashboards_command_line_writes_every_setting_the_run_used_and_none_it_did_not"
INPROC_COPIES = ("tests/test_simulation_engine.py::test_the_in_process_backend_hands_each_clientapp_copies_and_wraps_"
                 "its_failures")
SIM_GATE = ("tests/test_simulation_engine.py::test_the_engine_is_offered_only_with_a_backend_it_has_and_the_document_"
            "says_which_carried_the_messages")
SIM_NODES = ("tests/test_simulation_engine.py::test_each_simulated_node_reads_its_own_shard_report_policy_and_features_"
             "by_partition")
ERR_RENDER = ("tests/test_error_messages.py::test_an_error_renders_on_one_line_with_each_parameter_named_as_the_"
              "front_end_names_it")
ERR_CUT = "tests/test_error_messages.py::test_a_long_value_in_an_error_is_cut_to_its_start_and_its_length"
ERR_OPTIONS = "tests/test_error_messages.py::test_options_that_do_not_apply_name_what_does_or_that_nothing_does"
INTERNAL_STATES = (f"{NODET}::test_an_internal_is_taken_as_replaced_only_by_the_object_recorded_and_every_other_"
                   "state_is_named")
PORT_RANGE = ("tests/test_deployment_inputs.py::test_a_port_range_is_bounded_ordered_and_inclusive_and_its_free_ports_"
              "are_distinct_and_unused")
FLAGS = f"{NODET}::test_a_flags_value_is_read_in_either_form_and_a_flag_without_one_is_none"
IDLE_POLL = f"{NODET}::test_a_nodes_idle_poll_backs_off_from_its_floor_to_its_cap_and_a_message_resets_it"
SHAMIR = "dpfed_core/deployment/shamir.py"
CONTROL = "dpfed_core/deployment/control.py"
DOORBELL = "dpfed_core/deployment/doorbell.py"
WATCHDOG = "dpfed_core/deployment/watchdog.py"
SIM_ARITHMETIC = ("tests/test_deployment_shamir.py::test_shares_made_with_simulation_arithmetic_combine_with_"
                  "pycryptodome")
SIM_PINNED = ("tests/test_deployment_shamir.py::test_a_changed_pycryptodome_keeps_its_own_hardened_"
              "multiplication")
START_TICKS = (f"{BREL}::test_a_processes_start_time_is_read_after_its_names_last_parenthesis_and_a_garbled_"
               "line_gives_none")
NOT_GONE = (f"{BREL}::test_an_identity_of_another_shape_another_boot_or_an_unreadable_start_is_never_taken_for_"
            "gone")
OWN_OPERATION = f"{BREL}::test_a_progress_row_settles_only_releases_of_its_own_operation"
UNSTARTED_POINTS = (f"{BREL}::test_unstarted_points_given_back_are_only_points_of_the_plan_still_reserved_and_keep_"
                    "their_note")
STORE_PATH = f"{ODOT}::test_a_blank_or_relative_location_setting_is_ignored_and_a_home_path_is_expanded"
SHARED_KEY = f"{ODOT}::test_a_key_the_environment_names_lets_new_stores_start_and_an_emptied_one_says_to_keep_it"
KNOWN_KEY = f"{ODOT}::test_the_key_of_known_data_is_the_one_earlier_stores_hold"
KEY_MEMO = f"{ODOT}::test_a_key_remembered_for_a_dataset_is_never_given_to_another_at_the_same_address"
DAMAGED_PAGES = f"{ODOT}::test_a_store_whose_pages_are_damaged_is_said_damaged_and_left_untouched"
KILLED_EVERY_ACCOUNT = (f"{FPT}::test_a_sweep_killed_outright_has_its_unstarted_points_given_back_in_every_account_"
                        "charged")
NO_KNOWN_ORDER = f"{BREL}::test_releases_computed_in_no_known_order_stay_charged_whatever_was_noted_finished"
NEGATIVE_COUNT = f"{BREL}::test_a_progress_row_of_a_gone_process_with_a_negative_count_gives_nothing_back"
DELTA_ALONE = f"{ODOT}::test_a_charge_of_delta_alone_is_kept_and_only_a_charge_of_nothing_is_left_out"
SIMULATION_SETTLED = f"{ODOT}::test_a_simulation_release_settled_from_its_ledger_stays_uncharged"
CUT_SHORT = f"{ODOT}::test_a_store_cut_short_beside_its_key_is_said_damaged_not_emptied"
NO_JOURNAL_LEFT = f"{BREL}::test_a_store_that_fails_to_be_set_up_leaves_no_journal_behind_either"
READ_ONLY_DIR = f"{BREL}::test_a_store_in_a_directory_this_process_cannot_write_opens_read_only"
ONE_ENTITY_RAW = (f"{ODOT}::test_a_release_non_private_for_one_entity_only_is_non_private_and_refused_on_a_capped_"
                  "dataset")
BALANCE_SAYS = (f"{ODOT}::test_an_accounts_balance_states_what_is_left_whether_it_is_void_and_a_basic_epsilon_only_"
                "when_it_holds")
CONTROL_FORK = f"{NODET}::test_a_forked_control_request_is_sent_over_the_tls_it_names_and_answers_in_one_line"
CONTROL_ANSWERS = f"{NODET}::test_a_refused_node_key_a_run_without_id_and_a_rejected_app_are_errors_naming_why"
DOORBELL_OPEN = (f"{NODET}::test_a_doorbell_listens_on_loopback_only_and_only_when_doorbells_are_on_and_a_port_is_"
                 "given")
DOORBELL_RING = f"{NODET}::test_a_ring_ends_one_wait_of_every_bell_rung_and_several_rings_are_one"
WATCHDOG_CLEAN = (f"{NODET}::test_the_watchdog_gives_every_group_its_grace_after_sigterm_then_kills_what_is_left_and_"
                  "removes_folders")
WATCHDOG_PIPE = f"{NODET}::test_the_watchdog_cleans_what_its_pipe_named_unless_released_and_ignores_ctrl_c"
NODE_DROPOUTS = f"{SITET}::test_a_nodes_summable_method_refuses_dropouts_that_leave_fewer_than_two_in_the_secure_sum"
NODE_WEIGHTING = f"{SITET}::test_a_nodes_prototype_method_refuses_a_server_weighting_it_does_not_know"
DEPLOYED = "dpfed_core/deployment/deployed.py"
APPS = "tests/test_deployment_apps.py"
SITE_LOG = f"{APPS}::test_a_sites_release_log_sums_its_rows_and_states_rho_only_when_every_row_has_one"
REPLIES = f"{APPS}::test_a_node_that_does_not_answer_or_answers_with_an_error_stops_the_run_naming_it"
FUSED_SPLIT = f"{APPS}::test_a_fused_sum_is_split_by_its_stages_public_lengths_and_a_mismatch_stops_the_run"
SIM_POLICY = f"{APPS}::test_a_simulation_run_needs_a_given_policy_that_allows_it"
NODE_DECIDES = f"{APPS}::test_a_sites_decision_reads_the_value_bound_and_the_federation_from_its_own_shard"
NODE_DERIVED = f"{APPS}::test_a_site_decides_on_the_row_bound_its_method_derives_before_any_charge"
PRECHECK_DERIVED = f"{APPS}::test_a_row_bound_the_method_derives_is_checked_against_value_bounds_before_anything_starts"
NODE_WITHDRAWS = (f"{APPS}::test_a_site_told_its_run_ended_refunds_only_what_its_own_record_says_it_never"
                  "_released")
SHARD_FORMAT = f"{APPS}::test_a_shard_or_a_features_file_that_is_not_what_its_format_says_is_refused"
POLICY_PATHS = f"{APPS}::test_site_policies_are_one_file_or_one_per_site_with_paths_a_node_config_can_carry"
SHARDS_WRITTEN = "tests/test_deployment.py::test_shards_hold_one_entity_each_and_bad_paths_say_how_to_fix"
SUM_OF_CONTRIBUTORS = (f"{APPS}::test_a_secure_sum_is_the_contributors_exact_sum_and_never_released_with_fewer"
                       "_than_h_minus_d")
UNDECIDED = (f"{APPS}::test_a_site_that_does_not_decide_stops_the_run_before_any_share_and_the_others_get_their"
             "_charge_back")
DEPLOYABLE = f"{APPS}::test_a_deployment_needs_two_entities_and_dropouts_only_for_summable_methods"
REPORTS = f"{APPS}::test_the_local_reports_are_this_runs_and_a_dropped_entity_has_none"
LOST_AFTER = f"{APPS}::test_a_site_lost_after_the_secure_sums_leaves_the_run_within_max_dropouts_and_beyond_stops"
SECAGG_DROP = "tests/test_secagg_dropouts.py"
STMT = "dpfed_core/privacy/statement.py"
BSPLIT = "dpfed_core/privacy/budget_split.py"
BST = "tests/test_budget_split.py"
BUDGETCAP_T = "tests/test_budget_caps.py"
BUDGETCAP_RC = "tests/test_run_config.py"
BUDGETCAP_SPLIT_FRACTIONS = f"{BST}::test_a_split_declares_fractions_and_refuses_more_than_the_whole"
BUDGETCAP_OPEN_BOUNDS = f"{BUDGETCAP_RC}::test_a_parameter_at_an_open_bound_is_refused_and_just_inside_it_accepted"
BUDGETCAP_SPLIT_PARAM = (f"{BUDGETCAP_RC}::test_a_budget_split_refuses_a_negative_share_naming_the_method_and_stage_"
                         "and_an_unknown_stage")
BUDGETCAP_RESERVED = f"{BUDGETCAP_RC}::test_a_main_setting_given_as_a_method_parameter_names_the_control_that_sets_it"
BUDGETCAP_RUN_PLAN = f"{BUDGETCAP_T}::test_a_run_plans_its_method_once_and_each_compared_method_as_a_comparison"
BUDGETCAP_SWEEP_PLAN = (f"{BUDGETCAP_T}::test_a_sweep_plans_one_batch_point_per_job_and_seed_and_none_for_points_a_"
                        "resumed_document_holds")
BUDGETCAP_SKIP_STORE = (f"{BUDGETCAP_T}::test_the_store_is_skipped_only_when_nothing_is_released_or_every_release_is_"
                        "an_unnamed_simulation")
BUDGETCAP_RAISE = f"{BUDGETCAP_T}::test_raising_a_cap_needs_its_confirmation_and_the_log_marks_it_raised"
BUDGETCAP_LOG = f"{BUDGETCAP_T}::test_the_cap_log_shows_the_newest_changes_and_counts_the_older_ones"
BUDGETCAP_READS = (f"{BUDGETCAP_T}::test_budget_releases_lists_the_newest_limit_and_a_read_of_a_missing_store_"
                   "creates_nothing")
BUDGETCAP_FORM_RANGE = (f"{BUDGETCAP_T}::test_the_dashboards_cap_form_holds_a_cap_set_on_the_command_line_outside_"
                        "its_usual_range")
BUDGETCAP_CAP_SHOWN = f"{BUDGETCAP_T}::test_a_planned_charge_and_a_cap_refusal_never_state_a_cap_above_the_one_set"
BUDGETCAP_DASH_CHARGE = (f"{BUDGETCAP_T}::test_a_dashboard_refusal_names_the_pages_controls_and_its_charge_never_"
                         "allows_a_non_private_release")
DPPT = "tests/test_dp_prototypes.py"
PLT = "tests/test_privacy_labels.py"
INF_SENS = f"{MECHT}::test_every_mechanism_refuses_an_infinite_or_negative_sensitivity_before_recording"
EXACT_KEEP = f"{MECHT}::test_exact_partition_tests_keep_a_count_equal_to_the_threshold"
GAUSS_RHO = f"{ACCT}::test_the_rho_of_a_gaussian_carries_its_margin_over_opendps_rounding_and_no_noise_is_infinite"
ROWS_RHO = f"{ACCT}::test_ledger_rows_are_gaussian_only_when_every_row_is_a_gaussian"
BATCH_TWO = (f"{ACCT}::test_a_batch_of_two_gaussian_points_is_composed_by_pld_and_its_large_points_add_"
             "their_epsilon")
TRUST_TEXT = f"{PLT}::test_the_trust_model_sentence_names_where_the_sum_was_formed_and_the_coalitions_guarantee"
POP_BOUND = f"{SUMT}::test_dp_popularity_bounds_each_row_by_row_norm_and_states_it_as_the_sensitivity"
NOISE_EDGE = f"{COT}::test_the_server_keeps_the_directions_above_the_noise_edge_of_the_sum_it_received"
COOC_LIMITS = f"{COT}::test_pop_share_at_either_end_and_fewer_than_two_items_are_refused_naming_the_parameter"
GAUSS_RECOVERY = (f"{DPPT}::test_gaussian_recovery_zeroes_sums_within_threshold_sigma_and_keeps_the_largest_"
                  "magnitudes")
LSH_THRESHOLDS = (f"{CORET}::test_the_lsh_release_grows_its_tree_with_the_public_thresholds_and_a_cap_of_"
                  "nodecap_times_k")
LEAF_THRESHOLD = f"{CORET}::test_the_leaf_threshold_is_node_factor_root_m_sigma_over_lambda_and_at_least_one"
AT_THRESHOLD = f"{CORET}::test_a_node_whose_count_equals_a_threshold_branches_and_is_kept"
JAMES_STEIN = f"{CORET}::test_james_stein_is_baranchiks_positive_part_estimator"
LEAF_BALL = f"{CORET}::test_noisy_leaf_points_stay_in_the_lambda_ball_and_weights_are_never_negative"
PROJ_DIM = (f"{DPPT}::test_the_default_projection_dimension_is_half_the_log_of_the_noisy_size_within_three_"
            "and_ten")

UI_INPUTS = "dpfed_core/ui/inputs.py"
UI_JOBS = "dpfed_core/ui/jobs.py"
UI_HISTORY = "dpfed_core/ui/history.py"
HREAD_T = "tests/test_history_reads.py"
UI_TABLES = "dpfed_core/ui/tables.py"
HEADLINE = (f"{DASHT}::test_an_observed_runs_headline_is_rmse_then_two_ranking_metrics_and_messages_state_their_"
            "shape")
NOT_PRIVATE = f"{DASHT}::test_a_non_private_run_is_said_not_private_and_states_no_guarantee"
METRICS_TABLE = f"{DASHT}::test_the_metrics_table_has_each_methods_entities_then_overall"
CLINICAL = f"{DASHT}::test_clinical_data_is_named_in_stays_whatever_the_case_of_its_name"
NOT_FINITE = f"{DASHT}::test_scores_that_are_not_finite_are_no_candidates_for_a_ranking"
K_NEAREST = f"{DASHT}::test_the_evidence_counts_only_the_k_nearest_rows"
FEATURED_KNOWN = f"{DASHT}::test_an_item_with_public_features_is_known_to_every_site"
UNSHARED_EIGHT = (f"{DASHT}::test_the_unshared_note_counts_every_item_and_marks_more_only_beyond_the_eight_it_"
                  "names")
OWN_USERS = (f"{DASHT}::test_an_entitys_users_and_test_users_hold_none_of_the_next_entity_and_a_history_lists_the_"
             "largest_values_first")
EVENT_SPREAD = (f"{DASHT}::test_event_measures_of_an_entity_skip_users_without_hidden_items_and_their_spread_is_the_"
                "sample_sds")
BANNER_WORD = (f"{DASHT}::test_an_entity_gets_its_word_at_exactly_the_evidence_rules_test_users_and_beside_a_measure_"
               "inside_its_noise")
COUNTS_AND_COLUMNS = (f"{DASHT}::test_the_server_broadcast_and_ledger_tab_state_their_counts_and_name_every_"
                      "column")
ODOMETER_FIGURES = (f"{DASHT}::test_a_download_keeps_every_figure_of_the_odometer_and_a_user_without_training_rows_is_"
                    "said_to_have_none")
STRICT_DOWNLOAD = (f"{DASHT}::test_a_downloaded_document_is_strict_json_and_a_stored_runs_line_skips_undefined_metrics_"
                   "and_escapes")
EVAL_DEFAULTS = "dpfed_core/evaluation/defaults.py"
COMMAND_LINE = f"{CLIT}::test_the_dashboards_command_line_writes_every_setting_the_run_used_and_none_it_did_not"
UI_DEFAULTS = "dpfed_core/ui/defaults.py"
UI_DATASETS = "dpfed_core/ui/datasets.py"
UI_BUDGET = "dpfed_core/ui/budget.py"
UI_PANEL = "dpfed_core/ui/deployment_panel.py"
RSECTIONS = "dpfed_core/reporting/report_sections.py"
REPORT_REFUSALS = (f"{REPORTT}::test_a_sweep_of_other_interactions_or_without_runs_and_an_audit_of_another_store_"
                   "are_refused")
REPORT_BESIDE = (f"{REPORTT}::test_comparisons_given_beside_the_run_have_their_guarantee_checked_and_the_runs_own_"
                 "counts_are_stated")
REPORT_SESSION = (f"{REPORTT}::test_a_report_from_the_session_is_the_public_version_when_asked_and_counts_the_"
                  "dataset_given")
REPORT_WRONG_FIGURES = (f"{REPORTT}::test_a_document_with_several_wrong_figures_names_the_runs_first_and_counts_the_"
                        "others")
REPORT_BAD_INPUT = f"{REPORTT}::test_missing_optional_parts_and_bad_input"
KEPT_FOLDER = ("tests/test_deployment_inputs.py::test_a_deployment_folder_of_another_user_or_of_an_owner_we_may_not_"
               "signal_is_kept")
PLAN_AT_MOST = (f"{DASHT}::test_a_stage_that_stops_on_an_earlier_release_spends_at_most_its_plan_and_the_caption_"
                "says_why")
PLAN_ON_PAGE = "tests/test_dashboard_pages.py::test_a_run_whose_ledger_spent_less_than_asked_says_so_on_the_federate_page"
REPORT_PY = "dpfed_core/reporting/report.py"
READOUT_T = "tests/test_report.py::"
BUDGET_CMD = "dpfed_core/cli/budget_cmd.py"
SITE_CMD = "dpfed_core/cli/site_cmd.py"
CLI_MAIN = "dpfed_core/cli/main.py"
ADVT = "tests/test_dashboard_advice.py"
DEFAULT_RUN = f"{ADVT}::test_every_setting_of_a_default_run_is_the_measurements_or_its_stated_constant"
RUN_WORDS = f"{ADVT}::test_the_trust_note_sweep_mode_and_method_words_follow_the_runs_method"
JOB_PROGRESS = f"{DASHT}::test_a_jobs_fraction_never_passes_one_nor_moves_back_and_its_time_left_extrapolates_it"
JOB_CACHE = (f"{DASHT}::test_the_job_cache_drops_a_failed_job_keeps_a_running_one_and_evicts_the_least_recently"
             "_used")
TYPED_INPUTS = f"{DASHT}::test_the_largest_epsilon_is_accepted_and_a_typed_grid_is_read_in_ascending_order"
LIST_ITEM_NAME = f"{DASHT}::test_a_name_that_reads_as_a_list_item_or_a_heading_is_escaped_at_its_start"
PARAM_CONTROL = f"{DASHT}::test_an_error_naming_its_parameter_points_at_the_control_that_sets_it"
STORED_INFINITIES = f"{DASHT}::test_a_stored_result_comes_back_with_both_infinities_as_numbers"
OTHER_OWNER_DELETE = f"{DASHT}::test_another_owner_cannot_delete_a_stored_result"
PAGE_TABLES = (f"{DASHT}::test_the_pages_tables_number_factors_from_one_list_test_users_first_and_say_who_sent"
               "_cluster_sizes")
DATA_PAGE = (f"{DASHT}::test_the_data_pages_counts_flag_entities_strictly_below_the_minimum_and_keys_cover_every"
             "_seed")
EVENT_WORDS = f"{DASHT}::test_each_protocol_event_reads_as_a_sentence_counting_entities_from_one"
LEDGER_TAB = (f"{DASHT}::test_the_ledger_tab_states_each_entitys_composed_delta_and_a_heatmap_takes_the_heaviest"
              "_items")
SITE_DECISION = f"{DASHT}::test_the_flower_panel_shows_a_sites_refusal_with_the_rule_that_refused"
PANEL_POLICY = "tests/test_deployment.py::test_the_flower_panel_refuses_a_bad_site_policy_in_its_own_words_before_charging"
SPEND_REASON = (f"{ADVT}::test_the_spend_line_gives_the_composition_reason_only_for_one_plan_after_an_earlier"
                "_spend")
SETTINGS_LINE = f"{ADVT}::test_a_runs_settings_line_names_only_what_its_method_uses_and_its_controls_come_back"
RELEASED_LOG = f"{REPORTT}::test_what_is_released_and_who_sees_it_are_read_off_the_message_log_by_direction"
ACCOUNTANT_CHECK = f"{REPORTT}::test_the_accountant_and_the_ledgers_check_against_the_request_state_both_parts"
AUDIT_VIOLATION = f"{REPORTT}::test_a_violation_of_the_audit_is_called_one_and_a_public_report_says_it_is_public"
SINGULAR_LINE = ("tests/test_budget_ui.py::test_the_budget_line_before_any_release_states_the_cap_and_counts_one"
                 "_release_in_the_singular")
BUDGET_COMMANDS = (f"{ODOT}::test_the_budget_commands_name_the_most_spent_entity_a_withdrawn_release_and_a_void"
                   "_guarantee")
SITE_CAP_SIM = f"{SITET}::test_the_site_command_states_the_cap_and_marks_each_simulation_release"
MATCHING_POLICY = f"{SITET}::test_the_policy_written_for_a_run_accepts_that_run_with_room_for_its_delta"
BAD_POLICY = f"{SITET}::test_a_bad_policy_file_is_one_error_naming_the_key"
CLI_FLAG_HINT = f"{CLIT}::test_an_error_names_the_flag_that_fixes_it_and_the_k_note_reads_the_runs_own_cluster_size"
CLI_K_AGREE = f"{CLIT}::test_the_cli_and_the_federate_page_call_k_a_maximum_in_the_same_cases"
PATH_BOX_LISTING = f"{DASHT}::test_a_loader_error_shown_under_a_path_box_names_no_file_of_the_directory"
CLI_PROD_NOISE = f"{CLIT}::test_a_run_draws_production_noise_unless_simulation_is_asked_and_keeps_each_setting_given"
ENTITY_SUMMARY_FROM_DATASET = (f"{REPORTT}::test_a_run_document_without_its_entity_summary_takes_the_counts_from"
                               "_the_dataset_given")
SECURITY = "dpfed_core/deployment/security.py"
SERVER_CERT = ("tests/test_deployment_inputs.py::test_the_server_certificate_names_both_local_hosts_is_no_ca_and_lasts"
               "_the_days_asked")
EXPERIMENTS = "dpfed_core/evaluation/experiments.py"
SERVICE = "dpfed_core/evaluation/service.py"
PLUGINS_LISTED = ("tests/test_deployment_inputs.py::test_the_plug_ins_of_a_process_are_its_environments_then_the_"
                  "flags_each_once_and_passed_on")
MESSAGE_SIZE = "tests/test_deployment_inputs.py::test_a_message_records_the_shape_and_bytes_of_what_crossed_the_boundary"
HISTORY = "dpfed_core/evaluation/history.py"
PARTIAL = "dpfed_core/evaluation/partial.py"
BUILTIN = "dpfed_core/methods/builtin.py"
REGISTRY = "dpfed_core/methods/registry.py"
SPECS = "dpfed_core/methods/comparison/specs.py"
FRIEDMAN = "dpfed_core/methods/comparison/friedman.py"
FCF_PY = "dpfed_core/methods/comparison/fcf.py"
XIN_PY = "dpfed_core/methods/comparison/xin.py"
FRIT = "tests/test_comparison_friedman.py"
BASELINES = "test_the_average_baselines_score_by_the_exact_averages_and_count_what_reached_the_curator"
FCFT = "tests/test_comparison_fcf.py"
XINT = "tests/test_comparison_xin.py"
SYSTEMS_HEAVIEST = f"{XINT}::test_the_public_users_are_the_heaviest_with_ties_taken_by_index"
READ_EM_STOP = (f"{XINT}::test_em_stops_at_the_first_iteration_whose_completed_rows_moved_less_than_tol_"
                "relative_to_the_last")
READ_XIN_DOWNLOADS = (f"{XINT}::test_each_private_user_downloads_the_model_before_its_release_and_the_log_"
                      "counts_every_copy")
READ_FRI_IGNORED = (f"{FRIT}::test_a_parameter_the_method_would_ignore_is_refused_naming_it_and_its_default_"
                    "is_accepted")
READ_ROC_TARGET = ("tests/test_report_charts.py::test_the_roc_chart_refuses_a_target_the_audit_has_no_curve_of_"
                   "naming_the_targets_it_has")
READ_INF_BARS = ("tests/test_report_charts.py::test_the_composed_epsilon_chart_keeps_an_unbounded_entity_marked_"
                 "infinite_above_every_finite_bar")
READ_WITH_METHOD = ("tests/test_app_pages.py::test_a_dp_method_after_a_run_that_spent_no_epsilon_gets_the_measured_"
                    "default_epsilon")
READ_PLAN_STAGES = "tests/test_dashboard_engine.py::test_every_stage_the_plan_names_is_a_stage_of_the_runs_ledger"
READ_COPIES = f"{XINT}::test_the_dashboard_and_the_report_count_every_copy_a_user_sent_or_received"
READ_BROADCAST = f"{XINT}::test_the_federate_page_says_the_round_the_message_log_broadcast_the_model_in"
READ_FRI_BASELINE_NOTE = f"{FRIT}::test_a_non_private_baseline_is_not_said_to_have_an_epsilon_protecting_one_rating"
READ_FCF_COPIES = ("tests/test_comparison_fcf.py::test_fcf_charges_every_entity_logs_both_directions_and_reports_"
                   "progress_against_every_round")
SYSTEMS_GRAM = f"{XINT}::test_the_m_step_through_the_gram_matrix_is_the_thin_svds_soft_threshold"
SYSTEMS_SOFT = f"{XINT}::test_shrink_step_soft_thresholds_singular_values"
SYSTEMS_ESTEP = f"{XINT}::test_the_e_step_keeps_each_observed_rating_centred_and_fills_the_rest_by_eq4"
SYSTEMS_EM = f"{XINT}::test_em_iterates_until_the_relative_change_is_below_tol_or_max_iter"
SYSTEMS_FROZEN = f"{XINT}::test_frozen_private_rows_enter_the_m_step_at_their_weights_after_a_warm_started_e_step"
SYSTEMS_PMC = f"{XINT}::test_pmc_gives_a_centred_zero_a_random_sign_and_takes_a_public_h"
SYSTEMS_PMC_FLIP = f"{XINT}::test_pmc_release_signs_and_magnitude"
SYSTEMS_PERM = f"{XINT}::test_every_coordinate_of_the_pmd_candidates_is_a_permutation_of_the_rating_scale"
SYSTEMS_ALIGN = f"{XINT}::test_the_pmd_search_aligns_the_candidates_with_the_centred_ratings"
SYSTEMS_PMD_STREAM = (f"{XINT}::test_a_pmd_user_rounds_its_completion_onto_the_scale_and_searches_with_the_settings_"
                      "given")
SYSTEMS_PMC_STREAM = f"{XINT}::test_a_pmc_user_releases_the_signs_of_its_centred_completion"
SYSTEMS_MODEL = f"{XINT}::test_the_model_predicts_by_eq4_with_its_tau_and_keeps_its_rank_and_em_settings"
SYSTEMS_ENTITY = f"{XINT}::test_each_entitys_private_users_send_one_vector_each_and_are_charged"
SYSTEMS_NO_SCALE = f"{XINT}::test_pmd_on_data_without_a_rating_scale_needs_its_values_and_draws_from_them"
SYSTEMS_PMD_SET = f"{XINT}::test_a_pmd_rating_set_of_one_value_or_a_repeated_one_is_refused_naming_values"
SYSTEMS_NAMED = f"{XINT}::test_more_public_users_than_users_or_a_zero_tau_is_refused_naming_the_parameter"
SYSTEMS_WEIGHT = f"{XINT}::test_private_vectors_enter_the_m_step_at_the_private_weight"
CONTRACT = "tests/test_method_contract.py"
COMPARISON_PRIVACY = f"{CONTRACT}::test_the_comparison_systems_state_the_privacy_they_have"
OWN_PARAMETERS = f"{CONTRACT}::test_each_comparison_method_takes_its_own_parameters_and_refuses_another_systems"
RUNWARN = "tests/test_run_warnings.py"
LABELS = "tests/test_privacy_labels.py"
POPULARITY = f"{CONTRACT}::test_popularity_scores_each_item_by_its_pooled_mean_over_users_or_over_its_ratings"
ENTITY_SUMS_COMBINED = ("tests/test_metrics.py::test_each_entitys_sums_combined_give_the_metrics_of_the_in_process_"
                        "evaluation")
HISTORY_ENTRIES = (f"{ODOT}::test_history_names_an_audits_methods_and_a_sweeps_grid_and_refuses_deleting_what_is_"
                   "not_there")
HISTORY_LISTED = f"{DASHT}::test_the_history_lists_an_owners_results_of_one_kind_newest_first_up_to_the_limit"
RUN_FACTORS_KEPT = f"{DASHT}::test_only_a_run_keeps_its_factors_and_a_deleted_run_leaves_none_in_the_store"
REOPENED_EPSILON = (f"{DASHT}::test_a_reopened_run_keeps_its_message_log_and_its_configuration_with_an_infinite_"
                    "epsilon")
FACTORLESS_RUN = f"{DASHT}::test_a_run_stored_without_factors_says_where_they_stayed"
CHARGED_BODY = (f"{DASHT}::test_a_charged_computation_is_settled_with_its_result_and_a_non_private_one_past_a_cap_"
                "is_refused")
LABEL_READS_NO_STORE = f"{DASHT}::test_a_simulations_planned_charge_and_a_cached_result_read_no_store"
GIVEN_OWNER_KEY = f"{DASHT}::test_a_result_saved_under_a_given_owner_key_is_read_under_that_key"
HISTORY_ROWS = f"{ODOT}::test_history_lists_each_entrys_data_epsilon_time_operation_and_flag_up_to_the_limit"
DEPLOYED_LABEL = (f"{ODOT}::test_a_deployed_runs_label_names_flower_and_a_grid_point_without_a_number_is_a_question_"
                  "mark")
RUN_DOCUMENT = ("tests/test_protocol.py::test_a_run_records_a_non_dp_methods_epsilon_as_inf_keeps_the_datas_notes_"
                "and_is_compared_first")
PUBLIC_INPUT_ROW = ("tests/test_public_inputs.py::test_the_public_input_row_names_six_features_and_counts_the_rest_for_"
                    "federated_dp_methods_only")
UNDECLARED_FEDERATION = ("tests/test_intake_federation.py::test_an_undeclared_federation_is_refused_only_for_a_private_"
                         "run_that_is_not_a_simulation")
SWEEP_CHECKPOINTS = (f"{BREL}::test_a_sweep_checkpoints_every_point_but_the_last_and_lists_its_references_without_the_"
                     "swept_method")
COMPARED_ONCE = (f"{BREL}::test_a_compared_method_is_the_runs_own_only_once_and_the_parameters_note_needs_"
                 "parameters")
COMPARED_FEDERATION = f"{BREL}::test_a_compared_dp_method_needs_a_declared_federation_too"
SWEEP_NOT_SAVED = f"{BREL}::test_a_sweep_not_to_be_saved_leaves_the_history_empty"
SWEEP_RESUMED = f"{BREL}::test_a_resumed_sweep_keeps_each_point_once_in_the_grids_order_and_refuses_other_data"
SWEEP_GRID = f"{VERDICTT}::test_a_sweep_grid_with_a_zero_epsilon_no_seed_or_a_repeat_is_refused_naming_its_flag"
SWEEP_JOBS = f"{VERDICTT}::test_sweep_jobs_run_a_dp_reference_at_every_epsilon_and_others_once"
VERSUS_DP_POPULARITY = (f"{VERDICTT}::test_versus_dp_popularity_is_inconclusive_within_the_larger_sd_and_reads_the_"
                        "metrics_direction")
HIGHER_IS_BETTER_CROSSING = (f"{VERDICTT}::test_a_higher_is_better_metric_crosses_where_it_is_higher_and_a_tie_never_"
                             "beats")
SWEEP_SE = f"{VERDICTT}::test_the_sweep_verdicts_standard_error_is_the_sample_sd_over_the_root_of_the_seeds"
PAIRED = (f"{VERDICTT}::test_a_paired_effect_pairs_each_seed_with_its_own_baseline_run_and_beats_only_beyond_one"
          "_sd")
OWN_ITEMS_KEPT = f"{SITEMS}::test_an_entity_keeps_its_own_items_only_where_its_site_model_keeps_its_own_parts"
EMPTY_IS_LOCAL = f"{SITEMS}::test_an_empty_catalogue_leaves_each_site_its_own_model"
EMPTY_FEATURES = f"{SITEMS}::test_an_empty_catalogue_leaves_each_site_the_local_model_with_its_public_feature_parts"
EMPTY_NO_BLEND = f"{SITEMS}::test_an_empty_catalogue_leaves_a_method_without_its_local_blend_nothing"
KNOWN_SHRUNK = (f"{BLENDT}::test_with_known_items_only_the_shrunk_default_weighs_the_site_against_the_federation_"
                "where_it_speaks")
KEPT_FITS = f"{BLENDT}::test_a_site_fit_kept_for_reuse_is_read_again_only_under_the_same_rule_and_ridge"
CONTENT_ROWS = f"{BLENDT}::test_a_sites_content_model_is_fitted_on_all_its_rows_with_the_features_it_is_given"
SAMPLES = f"{BLENDT}::test_the_hold_outs_candidate_items_and_fit_rows_are_uniform_samples"
FEW_CANDIDATES = ("tests/test_set_metrics.py::test_a_user_with_fewer_candidates_than_n_is_recommended_every_"
                  "candidate_and_no_more")
LEDGER_GUARANTEE = f"{PLT}::test_the_dashboards_guarantee_is_the_ledgers_epsilon_and_delta_beside_the_request"
CLI_TABLE = f"{CLIT}::test_the_run_table_states_each_methods_ledger_epsilon_and_overall_numbers"
WAIT_AND_AUDIT_FLAGS = (f"{CLIT}::test_a_number_flag_written_in_no_plain_decimal_or_out_of_range_is_refused_"
                        "before_anything_starts")
SWEEP_SUMMARY = (f"{BREL}::test_the_sweep_summary_compares_with_individual_beside_local_and_with_dp_popularity_as_its_"
                 "baseline")


REVERSED_ROWS = ("tests/test_entity_factors.py::test_reversed_or_negative_entity_rows_and_local_items_not_matching_"
                 "their_rows_are_refused")
REG_UNREGISTERED = (f"{CONTRACT}::test_a_look_up_and_the_method_list_know_every_federated_method_before_any_is_"
                    "registered")
REG_NOTES = f"{CONTRACT}::test_a_federated_runs_document_carries_its_models_notes_and_stage_timings"
REG_PARAMS = f"{CONTRACT}::test_a_federated_method_is_registered_with_its_classes_parameters_each_found_by_name"
FCF_RESET = f"{FCFT}::test_each_epoch_restarts_adam_unless_told_to_keep_its_state"
FCF_GD = (f"{FCFT}::test_a_plain_gradient_step_moves_against_the_gradient_and_the_clients_end_on_the_final_"
          "items")
FCF_TRAFFIC = (f"{FCFT}::test_fcf_charges_every_entity_logs_both_directions_and_reports_progress_against_every_"
               "round")
FCF_ALS_POOLED = f"{FCFT}::test_implicit_als_charges_every_entity_for_the_raw_rows_it_pools"
FCF_LEAK = (f"{FCFT}::test_an_upload_names_at_most_max_items_and_claims_the_values_only_when_every_item_is_"
            "recovered")


QUALITY_METRICST = "tests/test_metrics.py"
QUALITY_SETT = "tests/test_set_metrics.py"
QUALITY_DATASETT = "tests/test_dataset.py"
QUALITY_SHARED = "tests/test_site_items.py::test_shared_items_project_and_lift_are_public_maps"
QUALITY_TARGETS = "tests/test_audit.py::test_targets_and_neighbours"
QUALITY_SHARED_PY = "dpfed_core/models/shared_items.py"
QUALITY_OWN_MODE = f"{QUALITY_METRICST}::test_a_run_is_evaluated_in_its_own_mode_at_its_own_cut_off"
QUALITY_SPLIT_ROUNDED = f"{SPLITT}::test_each_entity_tests_its_fraction_rounded_to_the_nearest_user"
QUALITY_SPLIT_KNOWN = f"{SPLITT}::test_the_number_of_test_users_is_known_before_the_split_is_drawn"
QUALITY_TRAIN_ROWS = f"{SPLITT}::test_training_rows_read_any_way_are_the_training_matrix"
QUALITY_FIT_CONVERGES = f"{FACTORT}::test_fits_stop_at_their_tolerance_not_their_cap"
QUALITY_PRODUCTS = f"{FACTORT}::test_objective_from_the_v_updates_products_equals_the_direct_objective"
QUALITY_DS_ROWS = (f"{QUALITY_DATASETT}::test_rows_are_reordered_by_entity_with_their_"
                   "ids_and_a_stored_zero_is_no_interaction")
QUALITY_DS_BOUND = (f"{QUALITY_DATASETT}::test_the_default_value_bound_is_five_for_ratings_"
                    "one_for_implicit_data_and_counts_need_one")
QUALITY_DS_LABEL = f"{QUALITY_DATASETT}::test_a_label_outside_the_declared_entities_is_refused_wherever_it_would_sort"
QUALITY_DS_INDEX = f"{QUALITY_DATASETT}::test_an_entity_index_beyond_the_last_entity_is_refused"
QUALITY_DS_CATALOGUE = (f"{QUALITY_DATASETT}::test_a_declared_catalogue_is_shared_whole_unless_"
                        "it_leaves_some_of_the_datas_items_out")
QUALITY_DS_SELECT = (f"{QUALITY_DATASETT}::test_selected_items_keep_their_own_names_ids_"
                     "features_and_columns_in_the_order_asked")
QUALITY_PLAN_TARGET = (f"{PLANT}::test_a_higher_is_better_target_lies_below_the_reference_"
                       "and_the_sweep_is_read_in_epsilon_order")
QUALITY_PLAN_CROSSING = (f"{PLANT}::test_the_size_that_pays_is_where_advantage_minus_"
                         "sd_crosses_zero_on_a_log_scale_of_users")
QUALITY_PLAN_NONE = f"{PLANT}::test_no_finite_epsilon_within_the_target_plans_none_not_infinity"
QUALITY_NO_RIDGE_COLUMN = f"{FACTORT}::test_without_ridge_a_factor_column_of_zeros_gives_zero_not_nan"
QUALITY_NO_RIDGE_ITEM = (f"{FACTORT}::test_without_ridge_an_item_nobody_holds_gets_zero_factors_and_the_run_"
                         "is_evaluated")
QUALITY_PLAN_FLAT = f"{PLANT}::test_an_advantage_that_never_pays_and_does_not_grow_gives_no_size"
QUALITY_TWO_USERS = f"{AUDT}::test_an_entity_of_two_users_has_real_targets_and_one_of_one_user_only_its_synthetic_one"
QUALITY_SET_TIES = f"{QUALITY_SETT}::test_tied_scores_rank_the_lower_item_first_in_the_set_and_in_the_pr_auc"
QUALITY_SUPPORT = f"{AUDT}::test_the_synthetic_target_holds_at_least_one_item_and_at_most_the_catalogue"


@dataclass(frozen=True)
class Mutant:
    """One deliberate privacy bug, as an edit of the syntax tree (not of the text, so production code
    is formatted for people, never for this runner).

    where : the function (``name`` or ``Class.method``) to edit, or :data:`MODULE` for the whole module
    (a Streamlit page is a script: its widgets and engine calls sit at module level). find : a code pattern (expression
    or statement) matched structurally against that function's nodes — a call in the pattern may
    give only its first positional arguments and leave out keywords the real call has. It must match
    exactly once. new : what replaces the matched node, ``ORIG`` standing for the node itself; or,
    with ``arg`` (a position or a keyword), what replaces that argument of the matched call,
    ``ORIG`` standing for the argument. nth : when the pattern matches several times (e.g. one call
    per stage), edit the nth match (from 0) instead of requiring exactly one.
    """

    name: str
    path: str
    where: str
    find: str
    new: str
    tests: tuple[str, ...]
    arg: int | str | None = None
    nth: int | None = None


def _parse(code: str) -> ast.AST:
    try:
        return ast.parse(code, mode="eval").body
    except SyntaxError:
        return ast.parse(code).body[0]


def _matches(pattern: ast.AST, node: ast.AST) -> bool:
    """Structural match; a pattern's call may give only the first positional arguments and a subset
    of the keywords of the node's."""
    if type(pattern) is not type(node):
        return False
    if pattern is None:  # a dict's ``**`` entry has no key
        return True
    for field, pv in ast.iter_fields(pattern):
        if field in ("ctx", "type_comment", "kind"):
            continue
        nv = getattr(node, field, None)
        if field == "keywords":
            have = {k.arg: k.value for k in nv}
            if not all(k.arg in have and _matches(k.value, have[k.arg]) for k in pv):
                return False
        elif field == "args" and isinstance(pattern, ast.Call):  # a prefix of the positional arguments
            if len(pv) > len(nv) or not all(map(_matches, pv, nv[: len(pv)])):
                return False
        elif isinstance(pv, list):
            if not isinstance(nv, list) or len(pv) != len(nv) or not all(map(_matches, pv, nv)):
                return False
        elif isinstance(pv, ast.AST):
            if not isinstance(nv, ast.AST) or not _matches(pv, nv):
                return False
        elif pv != nv:
            return False
    return True


#: ``where`` of a mutant whose pattern is matched anywhere in the module, top-level code included.
MODULE = "<module>"


def _function(tree: ast.Module, where: str) -> ast.AST:
    if where == MODULE:
        return tree
    scope: list[ast.AST] = [tree]
    for part in where.split("."):
        found = [n for s in scope for n in ast.walk(s)
                 if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.name == part]
        if not found:
            raise LookupError(f"no {part!r} in {where!r}")
        scope = found[:1]
    return scope[0]


class _Substitute(ast.NodeTransformer):
    def __init__(self, original: ast.AST) -> None:
        self.original = original

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return copy.deepcopy(self.original) if node.id == "ORIG" else node


def _hits(fn: ast.AST, pattern: ast.AST) -> list[tuple[ast.AST, str, int | None, ast.AST]]:
    """(parent, field, index, node) of every node under ``fn`` matching ``pattern``, in a fixed order."""
    return [(parent, field, i, node) for parent in ast.walk(fn) for field, value in ast.iter_fields(parent)
            for i, node in (enumerate(value) if isinstance(value, list) else [(None, value)])
            if isinstance(node, ast.AST) and _matches(pattern, node)]


def _locate(tree: ast.Module, m: Mutant) -> tuple[ast.AST, str, int | None, ast.AST]:
    """(parent, field, index, node) of the node ``m`` edits in ``tree``; a :class:`LookupError` when the
    pattern is not found exactly once (or not ``nth + 1`` times)."""
    hits = _hits(_function(tree, m.where), _parse(m.find))
    if m.nth is None and len(hits) != 1:
        raise LookupError(f"{m.name}: pattern found {len(hits)} times in {m.where}")
    if m.nth is not None and len(hits) <= m.nth:
        raise LookupError(f"{m.name}: pattern found {len(hits)} times in {m.where}, not {m.nth + 1}")
    return hits[m.nth or 0]


def apply_mutant(source: str, m: Mutant) -> str:
    """The mutated module source; a :class:`LookupError` when the pattern is not found exactly once."""
    tree = ast.parse(source)
    parent, field, i, node = _locate(tree, m)
    if m.arg is not None:
        if not isinstance(node, ast.Call):
            raise LookupError(f"{m.name}: arg= needs a call")
        if isinstance(m.arg, int):
            node.args[m.arg] = _Substitute(node.args[m.arg]).visit(_parse(m.new))
        else:
            kw = next(k for k in node.keywords if k.arg == m.arg)
            kw.value = _Substitute(kw.value).visit(_parse(m.new))
    else:
        replacement = _Substitute(node).visit(_parse(m.new))
        if i is None:
            setattr(parent, field, replacement)
        else:
            getattr(parent, field)[i] = replacement
    return ast.unparse(ast.fix_missing_locations(tree))


BUDGETREAD_ROUNDING = f"{ODOT}::test_a_planned_charge_shows_its_spend_rounded_up_and_what_is_left_rounded_down"
BUDGETREAD_RUNS_LEFT = f"{ODOT}::test_runs_left_reads_as_a_refusal_at_none_and_agrees_in_number"
FEDPROTO_COUNT_ROWS = f"{DPPT}::test_every_count_row_states_that_one_user_moves_a_count_by_one"
FEDPROTO_RANDOM_CONFIGS = f"{DPPT}::test_dp_ledger_total_never_above_request_random_configs"
FEDPROTO_DELTA_SPLIT = (f"{DPPT}::test_the_gaussian_variants_delta_goes_to_the_candidates_and_the_sums_as_the_split_"
                        "declares")
FEDPROTO_PADDING = f"{DPPT}::test_candidates_padded_beyond_the_partition_are_drawn_without_the_data"
FEDPROTO_CONFIG_ERRORS = f"{DPPT}::test_dp_friendly_config_errors"
FEDPROTO_LSH_THRESHOLDS = f"{CORET}::test_the_lsh_trees_thresholds_read_public_inputs_never_the_number_of_users"
FEDPROTO_LSH_REFINE = f"{CORET}::test_lsh_refinement_adds_recovery_rows_within_budget"
FEDPROTO_PAPER_LLOYD = f"{CORET}::test_the_paper_variants_lloyd_steps_share_the_recovery_budget"
FEDPROTO_ZERO_SHARE = ("tests/test_cli.py::test_a_zero_share_for_a_stage_that_runs_is_refused_before_the_dry_run_naming_"
                       "the_split_method_and_stage")
FEDPROTO_OWN_DELTA = f"{PROTOT}::test_a_dp_method_spends_the_runs_own_delta"
FEDPROTO_NON_PRIVATE_INF = f"{PROTOT}::test_every_row_of_a_non_private_prototype_method_states_epsilon_inf"
FEDPROTO_AUTO_K = f"{DPPT}::test_the_number_of_prototypes_follows_the_released_user_count_not_the_true_one"
FEDPROTO_SUMS_AUDIT = (f"{DPPT}::test_one_added_user_moves_the_recovered_sums_by_at_most_the_sensitivity_they_are_"
                       "released_at")

RIDGE_RUNS = "tests/test_ridge.py::test_a_run_without_ridge_on_data_with_an_item_nobody_holds_is_evaluated"
RIDGE_SOLVE = ("tests/test_ridge.py::test_a_regular_system_is_numpys_solve_to_the_bit_and_a_singular_one_its_minimum_"
               "norm_solution")
RIDGE_REFUSED = "tests/test_ridge.py::test_output_perturbation_without_ridge_is_refused_before_the_run_naming_lambda"

ACCOUNT_T = "tests/test_budget_charges.py"
ACCOUNT_CAP_AT_SPEND = (f"{ACCOUNT_T}::test_a_cap_equal_to_what_is_spent_is_accepted_and_one_below_names_the_most_"
                        "spent_entity")
ACCOUNT_CAP_REMOVED = (f"{ACCOUNT_T}::test_removing_a_cap_is_a_raise_refused_without_confirmation_naming_that_flag_"
                       "and_logged")
ACCOUNT_NON_PRIVATE = (f"{ACCOUNT_T}::test_a_non_private_release_is_free_to_make_without_a_cap_refused_under_one_and_"
                       "recorded_when_allowed")
ACCOUNT_EPS_DELTA = f"{ACCOUNT_T}::test_a_release_is_charged_its_epsilon_as_epsilon_and_its_delta_as_delta"
ACCOUNT_CENTRAL = (f"{ACCOUNT_T}::test_a_central_rating_level_method_is_charged_as_non_private_at_the_epsilon_it_"
                   "was_asked")
ACCOUNT_WITHDRAWN = f"{ACCOUNT_T}::test_a_withdrawn_release_spends_nothing_and_is_listed_uncharged"
ACCOUNT_CHARGE_ONCE = (f"{ACCOUNT_T}::test_a_run_through_charge_is_charged_once_released_kept_when_it_drew_and_given_"
                       "back_when_it_did_not")
ACCOUNT_CAP_DELTA = f"{ACCOUNT_T}::test_releases_are_composed_and_checked_at_the_caps_delta_not_a_reference_one"
ACCOUNT_DRY_RUN = f"{ACCOUNT_T}::test_a_dry_run_states_the_increase_and_the_epsilon_left_after_earlier_releases"
ACCOUNT_REEXPORT = (f"{ACCOUNT_T}::test_a_cap_set_through_a_relabelled_reexport_is_the_peoples_and_binds_every_view_"
                    "of_them")
#: the query of an account's charges (one f-string: a pattern names it whole)
ACCOUNT_ENTRIES_SQL = ("f\"SELECT c.entity AS entity, c.epsilon AS eps, c.delta AS dlt, c.rho AS rho, "
                       "c.gaussian AS gauss, r.batch AS batch FROM charges c JOIN releases r ON r.id = c.release_id "
                       "WHERE r.dataset_key IN ({', '.join('?' * len(keys))}) AND r.simulation = 0 AND "
                       "r.status != 'withdrawn'\"")

#: runs left's query of the last operation's charges, and the same over every account the operation charged
ACCOUNT_OP_ROWS_SQL = ("SELECT c.entity AS entity, c.epsilon AS eps, c.delta AS dlt, c.rho AS rho, c.gaussian AS gauss, "
                       "r.batch AS batch FROM charges c JOIN releases r ON r.id = c.release_id WHERE r.operation = ? "
                       "AND r.simulation = 0 AND r.status != 'withdrawn'")
ACCOUNT_OP_ROWS = ("con.execute(f\"" + ACCOUNT_OP_ROWS_SQL + " AND r.dataset_key IN ({', '.join('?' * len(keys))})\", "
                   "(last['operation'], *keys))")

#: the report's and the dashboard's charts: what each one draws, under which label
CHART_T = "tests/test_report_charts.py::"
CHART_COMPOSED = (f"{CHART_T}test_the_composed_epsilon_chart_draws_each_entitys_guarantee_and_each_line_"
                       "at_its_own_value")
CHART_SECURE = f"{CHART_T}test_the_reports_epsilon_chart_marks_the_coalition_only_under_secure_aggregation"
CHART_DP_REF = (f"{CHART_T}test_a_dp_reference_at_infinite_epsilon_is_said_to_be_non_private_not_the_axis_"
                     "position_of_infinity")
CHART_TRADEOFF = (f"{CHART_T}test_the_tradeoff_chart_names_each_method_by_its_own_label_and_draws_infinity_"
                       "from_its_own_row")
CHART_BARS = f"{CHART_T}test_each_bar_stands_over_its_own_entity_whatever_order_a_methods_rows_come_in"
CHART_DOTS = f"{CHART_T}test_each_methods_dots_sit_at_its_own_values_when_entities_are_many"
CHART_AUDIT_EPS = f"{CHART_T}test_the_audit_epsilon_chart_draws_each_lower_bound_at_its_claimed_epsilon"
CHART_ROC = f"{CHART_T}test_the_roc_chart_draws_the_attack_it_names_with_each_curves_own_auc_and_epsilon"
CHART_ROC_SUMMABLE = (f"{CHART_T}test_the_roc_chart_of_a_summable_audit_names_the_attack_it_draws_one_"
                           "curve_per_epsilon")
CHART_DIRECTION = f"{CHART_T}test_every_metrics_label_points_the_way_its_better_values_lie"
CHART_AUDIT_ORDER = (f"{CHART_T}test_the_audit_epsilon_chart_joins_the_claims_in_epsilon_order_whatever_"
                          "order_they_ran_in")
CHART_PAPER = f"{CHART_T}test_the_paper_differences_name_the_trust_model_and_round_two_the_run_used"
OWN_MODEL_PROTOT = "tests/test_protocol.py"
OWN_MODEL_RECOMMEND = (f"{OWN_MODEL_PROTOT}::test_recommend_hides_the_users_training_items_only_and_breaks_ties_by_"
                       "the_lower_item")
OWN_MODEL_RIDGE = f"{OWN_MODEL_PROTOT}::test_a_prototype_runs_server_and_round_two_fit_with_the_runs_ridge"
OWN_MODEL_RELEASE_SHAPE = (f"{OWN_MODEL_PROTOT}::test_a_release_of_another_shape_is_refused_naming_the_method_"
                           "before_the_server_fits")
OWN_MODEL_KRANDOM = f"{OWN_MODEL_PROTOT}::test_krandom_sends_rows_drawn_at_random_not_the_entitys_first_rows"
OWN_MODEL_EXCLUDE_SEEN = f"{OWN_MODEL_PROTOT}::test_recommend_excludes_seen"
OWN_MODEL_MESSAGES = f"{OWN_MODEL_PROTOT}::test_two_rounds_message_log"
OWN_MODEL_OWN_NMF = f"{BLENDT}::test_the_sites_own_nmf_is_the_fit_of_its_used_items_put_back_on_their_columns"
OWN_MODEL_CACHED = f"{BLENDT}::test_the_cached_weight_search_scores_every_weight_vector_as_the_direct_scoring[False]"
OWN_MODEL_PICKS = f"{BLENDT}::test_the_blend_picks_the_informative_part_and_never_loses_to_a_part_alone"
OWN_MODEL_EVIDENCE = f"{BLENDT}::test_evidence_keeps_the_default_on_a_tiny_holdout_and_leaves_it_on_a_large_one"
OWN_MODEL_CLEARLY = f"{BLENDT}::test_clearly_lower_is_a_paired_one_standard_error_test"
OWN_MODEL_HOLDOUT_ITEM_PARTS = f"{BLENDT}::test_the_hold_out_scores_each_item_part_computed_without_the_hidden_entries"
OWN_MODEL_HIDDEN_FACTORS = (f"{BLENDT}::test_with_known_items_only_the_holdout_cannot_see_what_the_federation_says_"
                            "of_held_out_items[federation factors]")
OWN_MODEL_NO_HOLDOUT = f"{BLENDT}::test_fit_blend_without_holdout_users_returns_the_default_under_the_rule"
OWN_MODEL_FEW_USERS = f"{BLENDT}::test_a_holdout_of_min_evidence_users_is_evidence_and_one_fewer_is_not[19]"
OWN_MODEL_ALONE = f"{BLENDT}::test_a_small_site_under_the_alone_rule_keeps_its_own_popularity"
OWN_MODEL_EB = f"{BLENDT}::test_the_shrunk_popularity_is_the_empirical_bayes_estimate_on_what_the_federation_speaks_of"
OWN_MODEL_EB_WEIGHT = f"{BLENDT}::test_the_shrinkage_weight_is_empirical_bayes"
OWN_MODEL_VALUE_SCALE = f"{BLENDT}::test_the_value_scale_is_never_negative_so_it_never_turns_a_ranking_around"
OWN_MODEL_RELEASED = f"{BLENDT}::test_the_releases_leave_out_exactly_the_entries_the_site_validates_on"
OWN_MODEL_LIFT = f"{SITEMS}::test_shared_items_project_and_lift_are_public_maps"
OWN_MODEL_OWN_ITEMS = f"{SITEMS}::test_a_prototype_method_on_a_dp_catalogue_keeps_each_sites_own_items"
OWN_MODEL_EFT = "tests/test_entity_factors.py"
OWN_MODEL_OWN_PRODUCT = f"{OWN_MODEL_EFT}::test_scores_are_each_entity_s_own_product"
OWN_MODEL_ON_ITEMS = f"{OWN_MODEL_EFT}::test_on_items_and_storage_round_trip"
OWN_MODEL_NONZERO_ROWS = f"{OWN_MODEL_EFT}::test_local_columns_keep_only_non_zero_item_rows"
OWN_MODEL_CONVERGED = f"{FACTORT}::test_converged_is_the_decrease_against_the_progress_made"
OWN_MODEL_NNLS = f"{FACTORT}::test_row_fit_matches_brute_force_nnls"
OWN_MODEL_STOPS = f"{FACTORT}::test_fits_stop_at_their_tolerance_not_their_cap"
OWN_MODEL_DUPLICATION = f"{FACTORT}::test_weights_equal_row_duplication"
OWN_MODEL_UPDATE_RIDGE = f"{FACTORT}::test_a_factor_update_minimises_the_ridge_objective_in_that_factor"
OWN_MODEL_ROUND2_FIT = ("fit_site_model(X_h, rank=self.rank, lam=self.lam, mode=self.mode, max_iter=self.max_iter, "
                        "rng=None, features=features, V_fed=V_h, known_only=not shared.public)")
KEYED_T = "tests/test_keyed_accounts.py"
KEYED_NOWHERE = f"{KEYED_T}::test_the_content_key_is_written_nowhere_a_run_a_sweep_and_an_audit_leave_a_trace"
KEYED_APART = f"{KEYED_T}::test_two_stores_name_the_same_data_apart_and_one_store_alike_in_another_process"
KEYED_RENAMED = f"{KEYED_T}::test_an_older_store_is_renamed_once_and_keeps_balances_caps_aliases_reservations_and_history"
KEYED_READ_ONLY = f"{KEYED_T}::test_an_older_store_that_cannot_be_written_is_read_by_its_older_names"
KEYED_FOREIGN = f"{KEYED_T}::test_an_older_store_whose_key_is_another_is_refused_and_left_as_it_was"
KEYED_NO_KEY = f"{KEYED_T}::test_an_older_store_without_a_key_gets_one_and_its_accounts_keyed_names"
KEYED_REPORT = f"{KEYED_T}::test_a_report_compares_an_older_documents_name_by_the_datas_shape"
KEYED_RESUME = f"{KEYED_T}::test_a_sweep_resumed_with_another_store_is_refused_before_it_is_charged"

REPLY_TESTS = "tests/test_deployment_replies.py"
REPLY_BAD = f"{REPLY_TESTS}::test_a_prototype_sites_bad_reply_ends_the_run_naming_the_site_and_the_message"
REPLY_SHARE = f"{REPLY_TESTS}::test_a_secure_sum_share_of_another_length_ends_the_run_naming_the_site"
REPLY_MASKED = f"{REPLY_TESTS}::test_a_masked_share_is_read_for_its_public_length_and_finiteness_only"
REPLY_UNITS = (f"{REPLY_TESTS}::test_a_sites_prototypes_counts_and_ledger_rows_are_checked_and_a_noisy_negative_"
               "count_is_kept")
REPLY_COOC_WIDE = f"{REPLY_TESTS}::test_shares_that_all_miss_the_methods_public_length_end_the_run_at_their_arrival"
REPLY_WIDTH = "P.ndim != 2 or (n_columns is not None and P.shape[1] != n_columns)"
REPLY_IDENTITY = "decided is not None and name != decided or int(idx) != int(decided_index)"
DSHARE_ONE_ENTITY = (f"{REPLY_TESTS}::test_two_accepting_replies_under_one_entity_are_refused_before_either_is_"
                     "recorded")
DSHARE_ONE_ENTITY_RUN = (f"{REPLY_TESTS}::test_two_sites_accepting_as_one_entity_end_the_run_at_the_decisions_and_"
                         "every_accepting_site_withdraws")
DSHARE_NO_DECISION_KEY = (f"{REPLY_TESTS}::test_a_silent_site_beside_a_reply_without_a_decision_ends_the_run_naming_"
                          "the_silent_site")
DSHARE_RANGE = f"{REPLY_TESTS}::test_a_masked_entry_outside_the_modulus_range_is_refused_naming_the_site_and_the_range"
DSHARE_RANGE_RUN = f"{REPLY_TESTS}::test_a_masked_vector_outside_the_modulus_range_ends_the_run_at_its_arrival"
DSHARE_DUMP = f"{REPLY_TESTS}::test_a_refused_masked_vector_is_not_copied_to_the_dump_folder"
DSHARE_IN_RANGE = "p.size == 0 or p.min() >= 0 and p.max() < modulus"

SREAD_T = "tests/test_store_reads.py"
SREAD_UNCHANGED = f"{SREAD_T}::test_every_read_of_a_store_with_no_key_yet_leaves_it_byte_for_byte_as_it_was"
SREAD_ENV_KEY = f"{SREAD_T}::test_a_read_of_a_store_whose_key_is_named_by_the_environment_writes_no_row"
SREAD_EARLY = f"{SREAD_T}::test_a_name_read_before_the_store_had_a_key_charges_and_files_under_the_accounts_name"
SREAD_ONCE = f"{SREAD_T}::test_naming_an_account_for_a_charge_reads_the_key_once"
SREAD_LOST = f"{SREAD_T}::test_a_store_whose_key_file_is_gone_refuses_every_charge_and_read_of_data_naming_the_key"
SREAD_NO_KEY_ID = f"{SREAD_T}::test_a_store_holding_accounts_without_a_recorded_key_still_refuses_to_make_a_new_one"


UNREAD_T = "tests/test_unread_parameters.py"
UNREAD_AGREE = f"{UNREAD_T}::test_a_refused_parameter_would_not_change_the_fit_and_an_accepted_one_does"
UNREAD_SAID = (f"{UNREAD_T}::test_the_refusal_names_the_method_the_parameter_why_and_the_fix_on_the_cli_and_the_"
               "dashboard")
UNREAD_FIT = f"{UNREAD_T}::test_the_fit_itself_refuses_an_unread_parameter"
UNREAD2_T = "tests/test_unread_parameters.py"
UNREAD2_PARTITION = f"{UNREAD2_T}::test_the_partition_settings_are_read_by_the_partition_alone"
UNREAD2_CLI_LIST = (f"{UNREAD2_T}::test_the_cli_takes_a_list_parameter_as_comma_separated_numbers_and_refuses_an_"
                    "unspent_mf_share")
UNREAD2_FIFTH = f"{FRIT}::test_a_split_giving_the_factorisation_a_share_nothing_spends_is_refused"
UNREAD_POPULARITY = f"{UNREAD_T}::test_dp_popularity_reads_its_holdout_evidence_only_with_the_local_blend"
UNREAD_ROUND2 = f"{UNREAD_T}::test_a_summable_methods_round_2_setting_is_refused_without_the_local_blend"
UNREAD_LSH = f"{UNREAD_T}::test_the_lsh_tree_settings_are_refused_unless_the_candidates_come_from_the_lsh_coreset"

COMPARED_SETTINGS = ("tests/test_protocol.py::test_a_compared_method_gets_only_the_settings_it_uses_and_is_checked_"
                     "with_them_before_the_run")

HREAD_DELETE_UNREAD = ("tests/test_history_reads.py::test_deleting_a_result_checks_its_owner_from_the_document_and_"
                       "never_unpacks_its_arrays")
COST_PY = "dpfed_core/evaluation/cost.py"
SHARED_FITS = "tests/test_cost.py::test_a_run_after_one_that_made_the_sites_fits_is_predicted_at_its_measured_share"
MACHINE_SCALED = "tests/test_cost.py::test_predictions_are_scaled_by_how_long_this_machine_takes_for_the_engines_reference_work"
SAMPLERS_SCALED = "tests/test_cost.py::test_the_samplers_cost_is_scaled_by_the_reference_work_of_its_own_measurement"
REFERENCE_FASTEST = "tests/test_cost.py::test_the_reference_work_is_the_site_models_fit_and_counts_its_fastest_repeat"
PAGE_SCALED = "tests/test_cost.py::test_the_pages_hint_says_it_was_scaled_to_this_machine"
DSHARE_INDEX = (f"{REPLY_TESTS}::test_accepting_replies_at_one_index_or_outside_the_run_are_refused_before_any_"
                "share")
DSHARE_INDEX_RUN = f"{REPLY_TESTS}::test_a_site_accepting_at_another_sites_index_ends_the_run_at_the_decisions"
HREAD_DELETE = ("tests/test_history_reads.py::test_deleting_a_result_removes_its_arrays_and_adds_no_table_to_a_store_"
                "that_kept_none")

PMD_CHECKED_FIRST = "test_pmd_on_data_without_a_rating_scale_is_refused_by_the_checks_before_a_run_is_charged"
FEATURE_TOO_LARGE = "test_an_item_feature_too_large_for_the_models_is_refused_naming_its_cell"
STORE_IS_FOLDER = "test_a_store_key_naming_a_folder_is_refused_before_any_process_starts"
SITE_READ_COORDINATOR = "test_site_commands_pointed_at_a_coordinators_store_say_so_and_leave_it_unchanged"
STORE_DAMAGED = "test_a_store_key_naming_a_damaged_file_is_refused_before_any_process_starts"

MUTANTS = (
    # the dashboard's pages (scripts: edited at module level) and the method catalogue they show. What a
    # page gets wrong, a reader takes as the product's word: the list of another length or user, the
    # hidden-item count of the other list, a comparison charged as a second run, a refusal repeated per method
    Mutant("recommend-page-top-n-ignored", REC_PAGE, MODULE,
           "dash.explained_list(ds, split, result, entity, user, int(n), 'federated model')", "10", (REC_PAGE_TEST,),
           arg=5),
    Mutant("recommend-page-user-of-another-entity-ranked", REC_PAGE, MODULE, "dash.check_user(ds, entity, user)",
           "None", (REC_PAGE_TEST,)),
    Mutant("recommend-page-hidden-count-of-the-other-list", REC_PAGE, MODULE,
           "(mine['hidden test item'] == '✔').sum()", "(theirs['hidden test item'] == '✔').sum()",
           (REC_PAGE_TEST,)),
    Mutant("recommend-page-set-metrics-of-the-entity-alone", REC_PAGE, MODULE,
           "dash.user_set_metrics(ds, split, result, entity, user, int(n))",
           "alone_result if alone_result is not None else result", (REC_PAGE_TEST,), arg=2, nth=0),
    Mutant("evaluate-page-goes-on-after-a-refusal", EVAL_PAGE, MODULE, "break", "pass", (EVAL_PAGE_TEST,)),
    Mutant("evaluate-page-comparison-charged-as-a-run", EVAL_PAGE, MODULE,
           "ui.run(ds, config_for(m), label=f'Comparison {i + 1}/{len(todo)}: {m}', comparison=True)", "False",
           (EVAL_PAGE_TEST,), arg="comparison"),
    Mutant("evaluate-page-says-releases-spend-nothing", EVAL_PAGE, MODULE, "dash.any_release(todo)", "False",
           (EVAL_PAGE_TEST,)),
    Mutant("evaluate-page-verdict-colours-swapped", EVAL_PAGE, MODULE, "{'better': st.success, 'worse': st.error}",
           "{'better': st.error, 'worse': st.success}",
           ("tests/test_dashboard_pages.py::test_the_evaluate_verdict_is_shown_in_the_colour_of_its_word",)),
    Mutant("evaluate-page-undefined-metric-as-a-number", EVAL_PAGE, MODULE, "dash.undefined_as_words(wide)", "wide",
           (EVAL_NO_TEST_USERS,)),
    Mutant("evaluate-page-entity-without-test-users-dropped", EVAL_PAGE, MODULE,
           "df.pivot_table(index='entity', columns='method', values=metric, sort=False, dropna=False)", "True",
           (EVAL_NO_TEST_USERS,), arg="dropna"),
    Mutant("evaluate-page-verdict-on-the-first-metric", EVAL_PAGE, MODULE,
           "metric_keys.index('mar') if 'mar' in metric_keys else 0", "0", (EVAL_PAGE_TEST,)),
    Mutant("evaluate-page-shows-a-method-taken-off-the-list", EVAL_PAGE, MODULE,
           "{m: d for m, d in have['docs'].items() if m in chosen}", "have['docs']", (EVAL_PAGE_TEST,)),
    Mutant("federate-page-secure-whatever-the-toggle", FED_PAGE, MODULE,
           "'secure' if st.session_state.get('fed_secure') and dash.is_summable(method) else 'none'",
           "'secure' if dash.is_summable(method) else 'none'", (FED_TRUST,)),
    Mutant("federate-page-secure-for-a-prototype-method", FED_PAGE, MODULE,
           "'secure' if st.session_state.get('fed_secure') and dash.is_summable(method) else 'none'",
           "'secure' if st.session_state.get('fed_secure') else 'none'", (FED_TRUST,)),
    # a region written "nan" declared as an entity of its own but its stays sent to 'Unknown region'
    Mutant("eicu-region-text-nan-read-as-missing-for-the-stays", EICU, "load_eicu", "_plain_str(hospital['region'])",
           "_plain_str(hospital['region']).replace('nan', '')",
           (f"{LOADERT}::test_an_eicu_region_is_the_same_entity_in_the_entity_list_and_in_the_stays",)),
    Mutant("history-page-audit-reopened-under-the-owner-key", HIST_PAGE, MODULE,
           "(dash.dataset_fingerprint(ds), 'stored', pick)", "(owner, 'stored', pick)", (HIST,)),
    Mutant("history-page-kind-filter-ignored", HIST_PAGE, MODULE, "None if kind == 'all' else kind", "None", (HIST,)),
    Mutant("history-page-reopened-run-keeps-the-last-settings", HIST_PAGE, MODULE,
           "st.session_state[ui.CONFIG] = config", "pass", (HIST,)),
    Mutant("history-page-delete-does-nothing", HIST_PAGE, MODULE, "history.delete(ds, pick, key=owner)", "None",
           (HIST,)),
    Mutant("history-page-sweep-not-reopened", HIST_PAGE, MODULE,
           "st.session_state[ui.SWEEP] = {'key': ('stored', pick, tuple(req.get('epsilons', []))), 'doc': doc}", "pass",
           (HIST,)),
    Mutant("history-page-audit-not-reopened", HIST_PAGE, MODULE,
           "st.session_state['audit_result'] = {'key': (dash.dataset_fingerprint(ds), 'stored', pick), "
           "'doc': stored['doc']}", "pass",
           (HIST,)),
    # the audit page: an audit of no method or target, or of another dataset, shown or run; releases
    # undercounted before the button; the "Allow non-private releases" box not what is charged; a violation
    # or changed settings left unsaid; an audit not kept, or DP parameters of another run's method audited
    Mutant("auditpage-no-method-accepted", AUDPAGE, MODULE, "not methods", "False",
           (f"{AUDPT}::test_an_audit_of_no_method_or_no_target_is_refused_before_the_button",)),
    Mutant("auditpage-no-target-accepted", AUDPAGE, MODULE, "not specs", "False",
           (f"{AUDPT}::test_an_audit_of_no_method_or_no_target_is_refused_before_the_button",)),
    Mutant("auditpage-specific-user-ignored", AUDPAGE, MODULE,
           "[f'user:{user_text.strip()}'] if user_text.strip() else []", "[]",
           (f"{AUDPT}::test_the_release_count_before_the_button_counts_every_epsilon_target_and_both_classes",)),
    Mutant("auditpage-releases-counted-once", AUDPAGE, MODULE, "n_jobs * 2 * runs", "n_jobs * runs",
           (f"{AUDPT}::test_the_release_count_before_the_button_counts_every_epsilon_target_and_both_classes",), nth=0),
    Mutant("auditpage-releases-counted-once-before-the-first-audit", AUDPAGE, MODULE,
           "n_jobs * 2 * runs", "n_jobs * runs",
           (f"{AUDPT}::test_the_release_count_before_the_button_counts_every_epsilon_target_and_both_classes",), nth=1),
    Mutant("auditpage-private-methods-audited-once", AUDPAGE, MODULE, "len(grid) if m in private_methods else 1", "1",
           (f"{AUDPT}::test_the_release_count_before_the_button_counts_every_epsilon_target_and_both_classes",)),
    Mutant("auditpage-charged-without-the-checkbox", AUDPAGE, MODULE,
           "history.charged(ds, plan_audit(ds, entity, methods, grid, base.delta, seed=seed))", "True",
           (f"{AUDPT}::test_the_run_button_charges_with_the_checkbox_runs_the_chosen_attacks_and_keeps_a_new_audit_once",), arg="allow_non_private"),
    Mutant("auditpage-audit-not-kept", AUDPAGE, MODULE, "ui.record('audit', doc)", "None",
           (f"{AUDPT}::test_the_run_button_charges_with_the_checkbox_runs_the_chosen_attacks_and_keeps_a_new_audit_once",)),
    Mutant("auditpage-likelihood-ratio-never-run", AUDPAGE, MODULE,
           "['distance', 'lr', 'counts'] if use_lr else ['distance', 'counts']", "['distance', 'counts']",
           (f"{AUDPT}::test_the_run_button_charges_with_the_checkbox_runs_the_chosen_attacks_and_keeps_a_new_audit_once",), nth=1),
    Mutant("auditpage-cached-audit-timed-again", AUDPAGE, MODULE, "not cached", "True",
           (f"{AUDPT}::test_the_run_button_charges_with_the_checkbox_runs_the_chosen_attacks_and_keeps_a_new_audit_once",), nth=0),
    Mutant("auditpage-audit-of-other-data-shown", AUDPAGE, MODULE, "have['key'][0] != key[0]", "False",
           (f"{AUDPT}::test_an_audit_of_other_data_is_not_shown",)),
    Mutant("auditpage-violation-unsaid", AUDPAGE, MODULE, "[r for r in summary if r['verdict'] == 'VIOLATION']", "[]",
           (f"{AUDPT}::test_each_verdict_of_the_last_audit_is_said_in_its_own_words",)),
    Mutant("auditpage-changed-settings-unsaid", AUDPAGE, MODULE, "have['key'] != key", "False",
           (f"{AUDPT}::test_each_verdict_of_the_last_audit_is_said_in_its_own_words",)),
    Mutant("auditpage-report-with-comparisons-of-another-run", AUDPAGE, MODULE,
           "comp.get('config_key') != dash.config_key(run['config'])", "False",
           (f"{AUDPT}::test_the_report_includes_comparisons_only_of_the_runs_own_configuration",)),
    Mutant("auditpage-dp-parameters-of-another-method", AUDPAGE, MODULE,
           "dict(base.prototype_params or {}) if base.method in private_methods else {}", "dict(base.prototype_params or {})",
           (f"{AUDPT}::test_the_federate_pages_dp_parameters_are_audited_only_with_the_method_they_were_set_for",)),
    Mutant("auditpage-public-report-in-full", AUDPAGE, MODULE, "make(True)", "make(False)",
           (f"{AUDPT}::test_the_public_report_is_made_public_and_the_analysts_in_full",)),
    Mutant("federate-page-cached-run-priced-as-new", FED_PAGE, MODULE,
           "planned_charge_text(ds, plan_run(ds, config), cached=_cached)", "False", (FED_TRUST,), arg="cached"),
    Mutant("federate-page-changed-controls-unsaid", FED_PAGE, MODULE, "dash.config_key(cfg) != dash.config_key(config)",
           "False", (FED_TRUST,)),
    Mutant("federate-page-cached-run-stored-again", FED_PAGE, MODULE, "not cached", "True", (HIST,)),
    Mutant("federate-page-ledger-chart-without-the-coalition", FED_PAGE, MODULE,
           "float(_coal) if _trust.get('aggregation') == 'secure' and _coal is not None else None", "None",
           (EVAL_PAGE_TEST,)),
    Mutant("tradeoff-page-verdict-at-the-first-epsilon", TRADE_PAGE, MODULE,
           "1.0 if 1.0 in finite else min(finite, key=lambda e: abs(e - 1.0)) if finite else None",
           "finite[0] if finite else None", (TRADE_VERDICT,)),
    Mutant("tradeoff-page-stale-sweep-unsaid", TRADE_PAGE, MODULE, "have['key'] != key", "False", (TRADE_VERDICT,)),
    Mutant("tradeoff-page-loss-to-dp-popularity-unsaid", TRADE_PAGE, MODULE,
           "[r for r in rows if r['verdict'] == 'LOSES to dp-popularity']", "[]", (TRADE_VERDICT,)),
    Mutant("tradeoff-page-crossing-against-individual", TRADE_PAGE, MODULE,
           "next((b for b in dash.VERDICT_BASELINES if b in doc['references']), None)",
           "'individual' if 'individual' in doc['references'] else None", (TRADE_VERDICT,)),
    Mutant("federate-page-cached-result-unsaid", FED_PAGE, MODULE, "r.get('cached')", "False", (FED_TRUST,)),
    Mutant("tradeoff-page-planner-tolerance-not-a-percentage", TRADE_PAGE, MODULE, "tol / 100.0", "tol",
           (TRADE_VERDICT,)),
    Mutant("tradeoff-page-planner-at-the-last-runs-epsilon", TRADE_PAGE, "compute", "cfg_sub", "config",
           (TRADE_VERDICT,), nth=0),
    Mutant("federate-page-catalogue-forecast-unsaid", FED_PAGE, MODULE,
           "None if errors else dash.catalogue_forecast_text(ds, config)", "None",
           ("tests/test_dashboard_pages.py::test_the_federate_page_forecasts_the_items_a_dp_catalogue_keeps_before_a_run_"
            "on_data_without_one",)),
    # the dashboard's charged calls: past a cap, a non-private run needs the owner's tick
    Mutant("dashboard-run-non-private-without-the-checkbox", UI_WIDGETS, "run.compute",
           "charged_run(store, dataset, config, None, progress, allow_non_private=allow, save=False, comparison=comparison)",
           "True", (PAGE_CHARGE,), arg="allow_non_private"),
    Mutant("dashboard-sweep-non-private-without-the-checkbox", UI_WIDGETS, "run_sweep.compute",
           "charged_sweep(store, dataset, config, list(epsilons), list(seeds), list(references), progress, "
           "allow_non_private=allow, save=False)", "True", (PAGE_CHARGE,), arg="allow_non_private"),
    Mutant("data-page-small-entity-unsaid", DATA_SCRIPT, MODULE,
           "dash.small_entity_warning(ds, test_fraction=st.session_state.get('fed_test_fraction'))", "None",
           ("tests/test_dashboard_pages.py::test_the_data_page_names_an_entity_too_small_to_evaluate",)),
    Mutant("data-page-prefix-length-ignored", DATA_SCRIPT, MODULE, "f'prefix:{int(prefix_n)}'", "'prefix:2'",
           ("tests/test_app_pages.py::test_upload_with_derived_federation_key",)),
    # nth counts the matches in ast.walk's order (breadth first): 2 is the upload's options, 3 the eICU loader's
    Mutant("evaluate-page-local-not-asked-for", EVAL_PAGE, MODULE, "'local' not in docs", "False",
           ("tests/test_dashboard_pages.py::test_the_evaluate_verdict_is_shown_in_the_colour_of_its_word",)),
    Mutant("data-page-upload-exclusion-ignored", DATA_SCRIPT, MODULE, "{'exclude_entities': excluded} if excluded else {}",
           "{}", ("tests/test_app_pages.py::test_entity_with_two_users",), nth=2),
    Mutant("data-page-eicu-exclusion-ignored", DATA_SCRIPT, MODULE, "{'exclude_entities': excluded} if excluded else {}",
           "{}", ("tests/test_intake_pages.py::test_eicu_formulary_upload",), nth=3),
    Mutant("data-page-sample-exclusion-ignored", DATA_SCRIPT, MODULE, "{'exclude_entities': excluded} if excluded else {}",
           "{}", ("tests/test_dashboard_pages.py::test_a_sample_loaded_with_an_entity_left_out_has_every_other_entity",),
           nth=0),
    Mutant("privacy-statement-secure-sum-said-deployed", UI_TABLES, "guarantee_text",
           "trust.get('in_process', True)", "trust.get('in_process', False)", (STATEMENT,)),
    Mutant("privacy-statement-noise-drawn-once-unsaid", UI_TABLES, "guarantee_text", "trust.get('noise')", "False",
           (STATEMENT,)),
    Mutant("privacy-statement-no-secure-aggregation-unsaid", UI_TABLES, "guarantee_text",
           "text += '\\n\\nNo secure aggregation: every entity added the full noise to its own release.'", "pass",
           (STATEMENT,)),
    # a site's request check: a DP catalogue asked at ε = ∞ is refused by name, not failed in the calibration
    Mutant("site-dp-catalogue-at-infinite-epsilon-unrefused", "dpfed_core/deployment/hooks.py", "method_config",
           "not math.isfinite(config.epsilon)", "False",
           ("tests/test_summable.py::test_a_request_for_a_dp_catalogue_at_infinite_epsilon_is_refused_by_name_at_a_"
            "site",)),
    # the split reads the caller's matrix and never rewrites it: canonical form on a copy
    Mutant("split-canonicalises-the-callers-matrix", "dpfed_core/data/split.py", "split_users", "X = X.copy()", "pass",
           ("tests/test_split.py::test_the_split_leaves_the_callers_matrix_as_it_was",)),
    Mutant("method-box-opens-on-another-method", UI_CATALOGUE, "federated_methods",
           "(m != DP_METHOD, not METHODS[m].uses_epsilon, m)", "(not METHODS[m].uses_epsilon, m)", (METHOD_BOX,)),
    Mutant("method-box-k-note-one-prototype-size", UI_CATALOGUE, "k_note", "2 * int(cs)", "int(cs)", (METHOD_BOX,)),
    Mutant("method-box-budget-split-among-parameters", UI_CATALOGUE, "method_parameters",
           "p.advanced and p.kind != 'mapping'", "p.advanced", (METHOD_BOX,)),
    Mutant("method-box-references-as-federated-methods", UI_CATALOGUE, "federated_methods",
           "METHODS[m].uses_k or is_summable(m)", "True", (METHOD_BOX,)),
    # after a run the budget line says which δ its spend is at when the run stated its ε at another
    Mutant("budget-summary-run-delta-unsaid", BUDGET_CMD, "budget_summary_line",
           "run_delta is None or float(run_delta) == float(top.guarantee_delta)", "True",
           (f"{ODOT}::test_the_budget_commands_name_the_most_spent_entity_a_withdrawn_release_and_a_void_guarantee",)),
    # the Gaussian, Laplace and count mechanisms and the releases built on them
    Mutant("gaussian-sigma-halved", MECH, "gaussian_mechanism",
           "sampler_for(rng).gaussian(values, sigma / divisor)", "sampler_for(rng).gaussian(values, sigma / divisor / 2)",
           (f"{NB}::test_dp_gaussian_mechanism_stays_under_epsilon_delta", REC)),
    Mutant("partition-gamma-100x-delta", PMECH, "partition_plan",
           "mech.partition_threshold(eps_level, delta_cand / n_tests)", "100 * ORIG",
           (f"{NB}::test_dp_candidate_stage_isolated_user_stays_under_delta",), arg=1),
    Mutant("search-em-4x-epsilon", PMECH, "private_local_search",
           "mech.exponential_mechanism(utilities, cap, eps_step, rng)", "4 * ORIG",
           (f"{NB}::test_dp_local_search_stays_under_epsilon", REC), arg=2),
    Mutant("search-step-sensitivity-halved", PMECH, "private_local_search",
           "mech.exponential_mechanism(utilities, cap, eps_step)", "ORIG / 2", (LOCAL_SEARCH_ROWS,), arg=1),
    Mutant("search-final-sensitivity-halved", PMECH, "private_local_search",
           "mech.exponential_mechanism(-np.asarray(losses), cap, eps_final)", "ORIG / 2", (LOCAL_SEARCH_ROWS,),
           arg=1),
    Mutant("trial-choice-sensitivity-halved", DPP, "DPPrototypes._release",
           "mech.exponential_mechanism(-np.asarray(losses), cap, e_choice)", "ORIG / 2", (STAGE_ROWS,), arg=1),
    Mutant("paper-sums-sensitivity-halved", PMECH, "recover_paper",
           "mech.laplace_mechanism(sel, s * bound, eps_sum)", "ORIG / 2", (STAGE_ROWS,), arg=1),
    Mutant("size-stage-4x-epsilon", DPP, "DPPrototypes._release",
           "mech.count_mechanism(n, 1, e_size, rng)", "4 * ORIG",
           (f"{NB}::test_dp_size_stage_and_auto_k_stay_under_epsilon", REC), arg=2),
    Mutant("selection-rho-always-monotone", "dpfed_core/privacy/noise.py", "noisy_top_k_rho",
           "dp.linf_distance(T=float, monotonic=monotone)", "dp.linf_distance(T=float, monotonic=True)",
           (f"{MECHT}::test_selection_rows_record_the_zcdp_rho_of_their_gumbel_scale",)),
    Mutant("partition-test-delta-unstated", MECH, "partition_keep",
           "_record(ledger, stage, 'private partition test (discrete Laplace ≥ γ)', eps_level, delta_test)", "0.0",
           (f"{MECHT}::test_mech_partition_keep_row_states_the_delta_of_a_cube_only_the_new_user_holds",), arg=4),
    Mutant("top-s-factor-dropped", MECH, "gumbel_top_s",
           "s * _em_scale(sensitivity, epsilon, monotone)", "_em_scale(sensitivity, epsilon, monotone)",
           (f"{NB}::test_dp_gumbel_top_s_stays_under_epsilon", REC)),
    Mutant("count-noise-halved", MECH, "count_mechanism",
           "sampler_for(rng).discrete_laplace(c, scale)", "scale / 2",
           (f"{NB}::test_dp_count_mechanism_stays_under_epsilon", REC), arg=1),
    Mutant("em-factor-2-dropped", MECH, "_em_scale",
           "(1.0 if monotone else 2.0) * sensitivity / epsilon", "1.0 * sensitivity / epsilon",
           (f"{NB}::test_dp_exponential_mechanism_stays_under_epsilon", REC)),
    # the examples
    Mutant("gaussian-delta-ignored", MECH, "gaussian_sigma",
           "zcdp_rho_for_epsilon(float(epsilon), float(delta))", "zcdp_rho_for_epsilon(float(epsilon), 0.25)",
           (f"{MECHT}::test_mech_gaussian_sigma_meets_delta_by_opendp_map",
            f"{NB}::test_dp_gaussian_mechanism_stays_under_epsilon_delta")),
    Mutant("sensitivity-from-data", DPP, "DPPrototypes._bounds",
           "vmax = float(self.value_max)", "vmax = float(X.max()) if X.nnz else float(self.value_max)",
           (f"{NB}::test_dp_recovery_bounds_are_public_and_entries_clipped",)),
    Mutant("row-clip-at-twice-the-bound", PMECH, "row_scale_sparse",
           "np.minimum(1.0, radius / np.maximum(norms, 1e-300))", "np.minimum(1.0, 2 * radius / np.maximum(norms, 1e-300))",
           (ROW_BOUND,)),
    Mutant("row-normalise-to-twice-the-bound", PMECH, "row_normalise_sparse",
           "np.where(norms > 0, radius / np.maximum(norms, 1e-300), 0.0)",
           "np.where(norms > 0, 2 * radius / np.maximum(norms, 1e-300), 0.0)",
           (ROW_BOUND,)),
    Mutant("projection-clip-at-twice-the-bound", PMECH, "clip_rows",
           "np.minimum(1.0, radius / np.maximum(norms, 1e-300))", "np.minimum(1.0, 2 * radius / np.maximum(norms, 1e-300))",
           (ROW_BOUND,)),
    Mutant("clipping-skipped", DPP, "DPPrototypes._preprocess",
           "np.clip(Xc.data, vmin, vmax, out=Xc.data)", "pass",
           (f"{NB}::test_dp_recovery_bounds_are_public_and_entries_clipped",)),
    Mutant("noise-shared-across-entities", PROTO, "FederatedRecommender.fit",
           "entity_rngs = rng.spawn(dataset.n_entities + 1)",
           "entity_rngs = [np.random.default_rng(self.random_state) for _ in range(dataset.n_entities + 1)]",
           (f"{NOISE}::test_noise_is_never_shared_across_entities",)),
    Mutant("budget-split-swapped", DPP, "DPPrototypes._recover",
           "mech.count_mechanism(true_n, 1, eps_cnt, rng)", "eps_sum", (REC,), arg=2),
    # seeded production noise, float artefacts, and the true-count canary
    Mutant("seeded-noise-in-production", PROTO, "FederatedRecommender.fit",
           "entity_rngs[:-1] = [SecureGenerator() for _ in range(dataset.n_entities)]", "pass",
           (f"{NOISE}::test_noise_seed_known_adversary_rebuilds_sizes_only_in_simulation",)),
    Mutant("numpy-float-noise-in-production", PROTO, "FederatedRecommender.fit",
           "SecureGenerator()", "np.random.default_rng()",
           (f"{NOISE}::test_noise_protocol_run_draws_from_opendp_in_production",)),
    Mutant("true-count-denominator", DPP, "DPPrototypes._recover",
           "denom = np.maximum(noisy_n, 1.0)[:, None]", "denom = np.maximum(true_n, 1.0)[:, None]",
           (f"{NB}::test_dp_recovery_never_divides_by_the_true_count",)),
    # the LSH-tree coreset
    Mutant("lsh-tree-levels-not-composed", CORE, "build_lsh_tree",
           "eps_level = eps_tree / (depth + 1)", "eps_level = eps_tree",
           (f"{CORET}::test_dp_lsh_tree_counts_stay_under_epsilon_and_audit_has_power",)),
    Mutant("lsh-leaf-true-count-denominator", CORE, "noisy_leaf_averages",
           "pts = sums / np.maximum(tree.counts, 1.0)[:, None]",
           "pts = sums / np.maximum(np.bincount(tree.leaf_of[members], minlength=L), 1.0)[:, None]",
           (f"{CORET}::test_dp_lsh_leaf_average_divides_by_the_released_count_never_the_true_one",)),
    Mutant("lsh-leaf-sensitivity-understated", CORE, "noisy_leaf_averages",
           "mech.gaussian_mechanism(sums, radius, eps_leaf, delta_leaf, rng)", "ORIG / 10",
           (f"{CORET}::test_dp_lsh_end_to_end_release_stays_under_epsilon_and_audit_has_power",), arg=1),
    Mutant("lsh-cap-from-true-count", CORE, "build_lsh_tree",
           "capped_thresholds(min_node, min_branch, n_root, cap_divisor)", "n",
           (f"{CORET}::test_dp_lsh_cap_reads_the_released_root_count_never_the_true_one",), arg=2),
    Mutant("lsh-finer-cap-ignores-count-noise", CORE, "build_lsh_tree",
           "capped_thresholds(min_node, min_branch, n_root, cap_divisor)", "0.0",
           (f"{CORET}::test_the_tree_lowers_its_cap_by_the_scale_of_its_own_count_noise",), arg="count_scale"),
    Mutant("lsh-refine-steps-from-true-count", DPP, "DPPrototypes._release_lsh",
           "default_refine_steps(float(self.epsilon), float(self.delta), int(k), int(m), lam)", "float(Xs.shape[0])",
           (f"{CORET}::test_lsh_refine_steps_follow_the_released_root_count_not_the_true_one",), arg="n_hat"),
    Mutant("paper-support-sensitivity-halved", PMECH, "recover_paper",
           "mech.gumbel_top_s(sums, s, bound, eps_sup, rng)", "bound / 2", arg=2,
           tests=("tests/test_dp_prototypes.py::test_the_paper_recoverys_support_is_selected_at_the_sensitivity_of_one_coordinate",)),
    Mutant("projection-dim-from-true-count", DPP, "DPPrototypes._release",
           "default_projection_dim(self.n_hat_)", "default_projection_dim(float(n))",
           ("tests/test_dp_prototypes.py::test_the_projection_dimension_follows_the_released_user_count_not_the_true_one",)),
    Mutant("lsh-lloyd-sigma-understated", DPP, "DPPrototypes._release_lsh",
           "gplan.sigma(step, lam)", "ORIG / 10",
           (f"{CORET}::test_lsh_default_refine_steps_follow_the_public_rule_within_budget",
            f"{CORET}::test_dp_lsh_lloyd_release_stays_under_epsilon_and_audit_has_power")),
    # summable releases and secure aggregation
    Mutant("cooccurrence-secure-share-without-secure-sum", SUMM, "SummableMethod.share_divisor",
           "self.aggregation == 'secure'", "True",
           (f"{COT}::test_neighbour_audit_stays_under_the_claim",)),
    Mutant("cooccurrence-rows-not-normalised", SUMM, "_unit_rows",
           "scale = np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)",
           "scale = np.where(norms > 0, 1.0, 0.0)",
           (f"{COT}::test_one_user_moves_each_release_by_at_most_one",)),
    Mutant("cooccurrence-ledger-sensitivity-understated", SUMM, "DPCooccurrence.share",
           "mech.gaussian_mechanism(values, 1.0, plan['stage_epsilon'][stage])", "0.5",
           (f"{COT}::test_ledger_rows_and_both_guarantees",), arg=1),
    # release-level bugs: sensitivities and maps of each stage (tests/test_release_audits.py)
    Mutant("popularity-contribution-bound-removed", SUMM, "DPPopularity.share",
           "scale = np.minimum(1.0, lam / np.maximum(norms, 1e-300))", "scale = np.ones_like(norms)",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    Mutant("cooccurrence-offdiag-weight-2", SUMM, "_packed_weights",
           "math.sqrt(2.0)", "2.0",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    Mutant("summable-share-sensitivity-halved", SUMM, "SummableMethod.gaussian_share",
           "mech.gaussian_mechanism(values, sensitivity, epsilon)", "ORIG / 2",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",), arg=1),
    Mutant("cooccurrence-stage-sigma-sqrt2-too-small", SUMM, "DPCooccurrence.share",
           "mech.gaussian_mechanism(values, 1.0, plan['stage_epsilon'][stage])", "ORIG / math.sqrt(2)",
           (f"{REL}::test_summable_draws_have_the_recorded_scale_and_the_row_its_map",), arg="sigma"),
    Mutant("cooccurrence-share-divisor-doubled", SUMM, "DPCooccurrence.share",
           "mech.gaussian_mechanism(values, 1.0, plan['stage_epsilon'][stage])", "ORIG * 2",
           (f"{REL}::test_summable_draws_have_the_recorded_scale_and_the_row_its_map",), arg="divisor"),
    Mutant("summable-seeded-noise-in-production", SUMM, "DPPopularity.share",
           "self.gaussian_share(totals, lam, rng)", "np.random.default_rng(0)",
           (f"{REL}::test_summable_production_noise_comes_from_opendp_not_the_seed",), arg=2),
    Mutant("catalogue-contribution-bound-removed", CAT, "select_catalogue",
           "Xb = _bounded_rows(X[sl], int(max_items), rng)", "Xb = (X[sl] > 0).astype(float)",
           (f"{REL}::test_catalogue_counts_move_by_at_most_the_contribution_bound",)),
    Mutant("catalogue-map-at-one-item", MECH, "partition_selection",
           "meas.map((int(sensitivity), int(sensitivity), 1))", "meas.map((1, 1, 1))",
           (f"{REL}::test_catalogue_counts_move_by_at_most_the_contribution_bound",)),
    Mutant("catalogue-union-bound-dropped", CAT, "selection_threshold",
           "math.log(c / (delta * (1.0 + math.exp(-1.0 / b))))",
           "math.log(1 / (delta * (1.0 + math.exp(-1.0 / b))))",
           (f"{REL}::test_catalogue_releases_an_item_only_the_added_user_holds_with_probability_at_most_delta",)),
    Mutant("secure-catalogue-weights-not-normalised", CAT, "secure_catalogue_share",
           "_unit_norm_rows(_bounded_rows(_bucket_rows(X, bucket, nb), c, rng))",
           "_bounded_rows(_bucket_rows(X, bucket, nb), c, rng)",
           (f"{SCAT}::test_secure_catalogue_weights_move_by_at_most_one_the_recorded_sensitivity",)),
    Mutant("secure-catalogue-sigma-at-half-the-sensitivity", CAT, "_secure_sigma",
           "gaussian_float_sigma_for_rho(rho, SECURE_CATALOGUE_SENSITIVITY, int(n_buckets))",
           "gaussian_float_sigma_for_rho(rho, 0.5 * SECURE_CATALOGUE_SENSITIVITY, int(n_buckets))",
           (f"{SCAT}::test_secure_catalogue_share_noise_is_sigma_over_divisor_and_row_rho_is_opendps_map",)),
    Mutant("secure-catalogue-share-not-divided", CAT, "secure_catalogue_share",
           "mech.gaussian_mechanism(counts, sens, eps_row, delta, rng)", "1.0",
           (f"{SCAT}::test_secure_catalogue_share_noise_is_sigma_over_divisor_and_row_rho_is_opendps_map",),
           arg="divisor"),
    # composition across releases: every path against dp-accounting
    Mutant("pld-batch-composes-one-point", ACC, "compose_releases",
           "batch_pld_epsilon([m.rho for m in gauss], room - d_rest)", "batch_pld_epsilon([gauss[0].rho], room - d_rest)",
           (f"{ACCT}::test_a_sweeps_points_are_one_pld_batch_at_half_the_caps_delta",)),
    Mutant("pld-batch-at-the-whole-delta", ACC, "compose_releases",
           "batch_pld_epsilon([m.rho for m in gauss], room - d_rest)", "delta - d_rest",
           (f"{ACCT}::test_a_sweeps_points_are_one_pld_batch_at_half_the_caps_delta",), arg=1),
    Mutant("zcdp-filter-at-the-whole-delta", ACC, "compose_releases",
           "zcdp_epsilon_of_rho(rho, half)", "zcdp_epsilon_of_rho(rho, delta)",
           (f"{ACCT}::test_zcdp_filter_is_the_summed_rho_at_half_the_caps_delta",)),
    Mutant("basic-filter-delta-not-split", ACC, "basic_delta_within",
           "basic_delta <= float(delta) / 2.0 * (1 + 1e-09) + 1e-300", "basic_delta <= float(delta) * (1 + 1e-09)",
           (f"{ACCT}::test_basic_composition_refuses_deltas_beyond_half_the_cap",)),
    Mutant("pure-release-rho-dropped", ACC, "compose_releases",
           "rho += e.rho", "rho += e.rho if e.gaussian else 0.0",
           (f"{ACCT}::test_pure_and_gaussian_releases_compose_by_their_summed_rho",)),
    Mutant("approximate-release-in-zcdp", ACC, "compose_releases",
           "if e.rho is None:\n    rho_ok = False\nelse:\n    rho += e.rho", "if e.rho is not None:\n    rho += e.rho",
           (f"{ACCT}::test_an_approximate_release_without_rho_leaves_only_basic_composition",)),
    Mutant("conversion-rho-understated", ACC, "zcdp_epsilon_of_rho",
           "compute_epsilon(_RDP_ORDERS, [rho * a for a in _RDP_ORDERS], delta)",
           "compute_epsilon(_RDP_ORDERS, [0.8 * rho * a for a in _RDP_ORDERS], delta)",
           (f"{ACCT}::test_conversion_is_within_one_percent_of_dp_accounting_and_tighter_than_the_classic_bound",)),
    Mutant("conversion-classic-bound", ACC, "zcdp_epsilon_of_rho",
           "min(zcdp_epsilon(rho, delta), eps_rdp)", "rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))",
           (f"{ACCT}::test_eighteen_releases_at_epsilon_one_are_charged_what_the_library_certifies",)),
    Mutant("coalition-divisor-not-squared", CAT, "secure_catalogue_share",
           "zcdp_epsilon(rho * divisor * divisor, delta)", "zcdp_epsilon(rho * divisor, delta)",
           (f"{ACCT}::test_the_federation_wide_catalogues_coalition_epsilon",)),
    # the people fingerprint
    Mutant("fingerprint-key-ignored", FPM, "people_fingerprint",
           "secret = _EPHEMERAL if secret is None else bytes(secret)", "secret = bytes(32)",
           (f"{FPT}::test_the_store_alone_cannot_say_who_is_in_it",)),
    Mutant("fingerprint-reads-values", FPM, "people_fingerprint",
           "item_h[X.indices]", "item_h[X.indices] ^ _mix64(X.data.astype(np.float64).view(np.uint64))",
           (f"{FPT}::test_values_play_no_part_items_do",)),
    Mutant("containment-threshold-half", FPM, "is_same_people",
           "m.contained >= CONTAINMENT_THRESHOLD", "m.contained >= 0.5",
           (f"{FPT}::test_the_containment_threshold_is_a_fifth",)),
    Mutant("containment-threshold-tenth", FPM, "is_same_people",
           "m.contained >= CONTAINMENT_THRESHOLD", "m.contained >= 0.1",
           (f"{FPT}::test_the_containment_threshold_is_a_fifth",)),
    # a store whose history is gone (emptied, or deleted while its key stays) is never a fresh budget
    Mutant("table-given-as-the-store-read-after-the-data", STORE, "refuse_non_store_file",
           "head and head != SQLITE_HEADER", "False",
           ("tests/test_cli.py::test_a_table_given_as_the_store_is_the_one_line_said_and_left_untouched",)),
    Mutant("emptied-store-read-as-a-new-budget", STORE, "Store._refuse_wiped", "not key.exists()", "True", (WIPED,)),
    Mutant("deleted-store-made-anew-beside-its-key", STORE, "own_key_left", "key.exists()", "False",
           (WIPED,)),
    Mutant("swapped-columns-charged-as-new-people", ODO, "BudgetOdometer._matches",
           "not found and fp_new is not None", "False",
           (f"{FPT}::test_a_table_read_with_its_user_and_item_columns_swapped_is_refused_naming_the_swap",)),
    Mutant("containment-one-way-only", FPM, "match_people",
           "contained = max(m_new / n_new, m_st / n_st)", "contained = m_new / n_new",
           (f"{FPT}::test_a_subsample_mixed_with_others_is_charged_to_the_stored_people",)),
    Mutant("site-coalition-cap-ignored", SITE, "check_coalition",
           "coalition_epsilon > policy.max_coalition_epsilon * (1 + 1e-12)", "False", (SITE_COALITION,)),
    Mutant("site-simulation-run-charged-nothing", SITE, "accept",
           "math.inf if req.non_private or req.simulation else req.epsilon",
           "math.inf if req.non_private else req.epsilon",
           (f"{SITET}::test_the_budget_binds_across_runs_in_the_sites_own_odometer",)),
    Mutant("re-export-entity-map-drops-small-shares", FPM, "match_people",
           "keep = np.flatnonzero(counts >= 1)", "keep = np.flatnonzero(counts >= max(1.0, 0.05 * counts.sum()))",
           (f"{FPT}::test_a_pool_of_a_few_people_of_every_entity_is_mapped_onto_every_one_of_them",)),
    Mutant("a-few-stored-people-are-no-account", FPM, "is_same_people",
           "min(m.matched_new, m.matched_stored) >= MIN_MATCHED_USERS",
           "min(m.matched_new, m.matched_stored) >= 3",
           (f"{FPT}::test_a_handful_of_stored_people_is_charged_to_them",)),
    Mutant("item-ids-read-as-written", FPM, "people_fingerprint",
           "canonical_item_id(i).encode('utf-8')", "str(i).encode('utf-8')",
           (f"{FPT}::test_an_id_column_written_as_numbers_another_way_is_the_same_items",)),
    Mutant("shape-bands-read-the-item-ids", FPM, "people_fingerprint",
           "labels[labels != 0][labelled.indices]", "item_h[np.flatnonzero(labels)][labelled.indices]",
           (f"{FPT}::test_the_same_people_with_their_items_named_otherwise_are_one_account",)),
    Mutant("shape-labels-keep-tied-counts", FPM, "_shape_labels",
           "np.isin(per_item, counts[ties == 1]) & (per_item > 0)", "per_item > 0",
           (f"{FPT}::test_a_catalogue_whose_items_all_have_about_as_many_users_takes_no_one_for_another",)),
    Mutant("counter-ids-matched", FPM, "_id_keys",
           "keys[_counter_ids(ids)] = 0", "pass",
           (f"{FPT}::test_record_numbers_find_the_same_people_in_another_table_counters_do_not",)),
    Mutant("record-numbers-ignored", FPM, "_id_keys",
           "keys[:] = user_h[:, None]", "pass",
           (f"{FPT}::test_record_numbers_find_the_same_people_in_another_table_counters_do_not",)),
    Mutant("counters-judged-for-the-whole-dataset", FPM, "_counter_ids",
           "part is not None and part[0] in dense", "part is not None and len(dense) > 0",
           (f"{FPT}::test_record_numbers_find_the_same_people_in_another_table_counters_do_not",)),
    Mutant("ids-with-thousands-separators-read-as-text", FPM, "canonical_item_id",
           "_GROUPED.fullmatch(text)", "False",
           (f"{FPT}::test_record_numbers_find_the_same_people_in_another_table_counters_do_not",)),
    Mutant("user-ids-hashed-without-the-key", FPM, "_user_hashes",
           "hashlib.blake2b(u.encode('utf-8'), digest_size=8, key=secret, person=b'dpfed-fp-user')",
           "hashlib.blake2b(u.encode('utf-8'), digest_size=8, person=b'dpfed-fp-user')",
           (f"{FPT}::test_record_numbers_find_the_same_people_in_another_table_counters_do_not",)),
    Mutant("keyed-item-set-entries-skipped", ODO, "BudgetOdometer._matches",
           "version in BANDS_OF_VERSION", "version == FP_VERSION",
           (f"{FPT}::test_a_stores_keyed_item_set_fingerprints_still_match_and_gain_every_band_when_the_data_is_read",)),
    Mutant("profile-bands-left-out", FPM, "_profile_keys",
           "tok = _mix64(bare ^ user_h[row])", "tok = np.zeros_like(bare)",
           (f"{FPT}::test_items_renamed_and_counts_changed_under_the_same_counter_ids_are_the_same_people",)),
    Mutant("profile-tokens-without-the-user-id", FPM, "_profile_keys",
           "tok = _mix64(bare ^ user_h[row])", "tok = bare",
           (f"{FPT}::test_items_renamed_and_counts_changed_under_the_same_counter_ids_are_the_same_people",)),
    Mutant("profile-shared-by-several-users-kept", FPM, "_profile_keys",
           "keys[users[shared[inverse] > 1]] = 0", "pass",
           (f"{FPT}::test_a_catalogue_whose_items_all_have_about_as_many_users_takes_no_one_for_another",
            f"{FPT}::test_users_with_too_few_items_and_repeated_profiles_count_once")),
    Mutant("profile-short-profiles-kept", FPM, "_profile_keys",
           "keys[nnz < PROFILE_MIN_ITEMS] = 0", "pass",
           (f"{FPT}::test_users_with_too_few_items_and_repeated_profiles_count_once",)),
    Mutant("profile-bins-read-the-item-ids", FPM, "_profile_keys",
           "lab = label[X.indices]", "lab = X.indices.astype(np.int64)",
           (f"{FPT}::test_items_renamed_and_counts_changed_under_the_same_counter_ids_are_the_same_people",)),
    Mutant("identity-states-the-containment", BREC, "Identity.describe",
           "f'same people as the stored dataset {self.alias_name!r} ({self.alias_of}; {RECOGNISED_BY}): charged to its budget'",
           "f'same people as the stored dataset {self.alias_name!r} ({self.alias_of}; containment {self.similarity:.2f}): charged to its budget'",
           (f"{FPT}::test_a_dry_run_and_budget_show_say_recognised_and_nothing_of_who_was_found_where",)),
    Mutant("preview-non-private-fits-under-a-cap", ODO, "BudgetOdometer._preview_account",
           "dp_fits and (not refused_unless_allowed)", "dp_fits",
           ("tests/test_odometer.py::test_preview_of_a_non_private_release_says_infinity_the_real_epsilon_left_and_the_refusal",)),
    Mutant("preview-non-private-spends-what-its-dp-releases-spend", ODO, "BudgetOdometer._preview_account",
           "math.inf if non_private else spend", "spend",
           ("tests/test_odometer.py::test_preview_of_a_non_private_release_says_infinity_the_real_epsilon_left_and_the_refusal",)),
    Mutant("report-cumulative-spend-silent-on-non-private-releases", "dpfed_core/reporting/report_sections.py",
           "cumulative_text", "acct.get('non_private_entities') or []", "[]",
           ("tests/test_report.py::test_first_screen_in_plain_words",)),
    Mutant("one-band-is-a-match", FPM, "match_people",
           "ok = best_n >= MIN_BANDS", "ok = best_n >= 1",
           (f"{FPT}::test_values_play_no_part_items_do",)),
    Mutant("band-lookup-first-hit-only", FPM, "match_people",
           "width = np.where(held_new, right - left, 0)",
           "width = np.where(held_new, np.minimum(right - left, 1), 0)",
           (f"{FPT}::test_every_user_is_found_again_even_among_near_identical_profiles",)),
    Mutant("older-unkeyed-fingerprints-ignored", ODO, "BudgetOdometer._matches",
           "fp = fp_old = fp_old or legacy_fingerprint(dataset)", "continue",
           (f"{FPT}::test_an_older_stores_unkeyed_fingerprints_still_match_and_are_rekeyed_when_the_data_is_read",)),
    Mutant("missing-key-silently-recreated", ODO, "BudgetOdometer._secret",
           "recorded is not None or n_keyed or n_named", "False",
           (f"{FPT}::test_a_missing_or_foreign_key_is_refused_never_replaced",)),
    # charges follow releases
    Mutant("failed-run-withdrawn-after-drawing", ODO, "BudgetOdometer.charge",
           "rows == 0 and isinstance(exc, Exception)", "isinstance(exc, Exception)",
           (f"{BREL}::test_a_run_that_fails_after_drawing_stays_charged",)),
    Mutant("account-entity-charged-the-smaller", BREC, "mapped_charge_rows",
           "max(prev[0], row[0])", "min(prev[0], row[0])",
           ("tests/test_odometer.py::test_an_account_entity_reached_through_several_new_entities_is_charged_their_largest_charge",)),
    Mutant("withdraw-without-proof", BREC, "Reservation.withdraw",
           "int(draws) != 0", "False",
           (f"{BREL}::test_withdraw_is_refused_once_anything_was_drawn_or_settled",)),
    Mutant("resumed-sweep-charged-again", "dpfed_core/evaluation/service.py", "execute_sweep",
           "done = resumed_points(resume, dataset, config, epsilons, seeds, references)", "done = set()",
           (f"{BREL}::test_a_resumed_sweep_is_charged_only_for_the_points_it_computes",)),
    Mutant("stopped-sweep-gives-back-the-point-that-drew", SERVICE, "execute_sweep",
           "finished['points'] + (rows_recorded() > finished['rows'])", "finished['points']",
           (f"{BREL}::test_a_sweep_that_stops_gives_back_the_points_it_never_started_and_its_resume_pays_for_each_once",)),
    Mutant("worker-processes-draws-taken-for-none", SERVICE, "_draws_seen_here", "config.n_jobs == 1", "True",
           (f"{BREL}::test_a_sweep_run_in_worker_processes_gives_nothing_back_when_it_stops",)),
    Mutant("stopped-sweep-keeps-every-point-charged", ODO, "BudgetOdometer.charge",
           "unstarted is not None", "False",
           (f"{BREL}::test_a_sweep_that_stops_gives_back_the_points_it_never_started_and_its_resume_pays_for_each_once",)),
    Mutant("withdrawn-point-stays-charged-in-other-accounts", BREC, "Reservation.withdraw_unstarted",
           "(self.release_ids[i], *self.extra_of.get(i, ()))", "(self.release_ids[i],)",
           ("tests/test_fingerprint.py::test_a_stopped_sweep_gives_back_its_unstarted_points_in_every_account_charged",)),
    Mutant("killed-sweep-progress-never-noted", SERVICE, "execute_sweep",
           'charged[0].note_finished(finished["points"] if finished["aligned"] else None)', "None",
           (f"{BREL}::test_a_sweep_killed_outright_has_its_never_started_points_given_back_by_the_next_charge",)),
    Mutant("killed-sweep-point-in-flight-given-back", BREC, "recover_killed",
           "plan_ids[finished + 1:]", "plan_ids[finished:]",
           (f"{BREL}::test_a_sweep_killed_outright_has_its_never_started_points_given_back_by_the_next_charge",)),
    # a run killed outright: 'reserved' for ever, as if still running, or its comparison given back
    Mutant("killed-run-left-reserved-for-ever", ODO, "BudgetOdometer.charge",
           "res.track(sequential=callable(unstarted))", "None", (KILLED_RUN,)),
    Mutant("killed-run-comparison-given-back", BREC, "Reservation.track", "0 if sequential else None", "0",
           (KILLED_RUN,)),
    Mutant("live-process-taken-for-gone", STORE, "process_gone",
           "start is not None and start != owner['start']", "True",
           (f"{BREL}::test_progress_of_a_process_that_may_still_run_is_left_as_it_is",)),
    Mutant("process-elsewhere-taken-for-gone", STORE, "process_gone",
           "any((owner[k] != me[k] for k in ('host', 'boot', 'pidns', 'uid')))", "False",
           (f"{BREL}::test_progress_of_a_process_that_may_still_run_is_left_as_it_is",)),
    Mutant("unreadable-process-taken-for-gone", STORE, "process_gone",
           "(FileNotFoundError, ProcessLookupError)", "OSError",
           (f"{BREL}::test_progress_of_a_process_that_may_still_run_is_left_as_it_is",)),
    Mutant("process-zero-taken-for-gone", STORE, "process_gone", "owner['pid'] <= 0", "False",
           (f"{BREL}::test_progress_of_a_process_that_may_still_run_is_left_as_it_is",)),
    Mutant("identity-read-from-another-namespaces-proc", STORE, "process_identity",
           "os.readlink('/proc/self') != str(os.getpid())", "False",
           (f"{BREL}::test_a_process_whose_proc_is_another_namespaces_keeps_no_progress_to_recover",)),
    Mutant("damaged-progress-row-stops-every-charge", BREC, "recover_killed",
           "(ValueError, TypeError, KeyError)", "()",
           (f"{BREL}::test_a_damaged_progress_row_never_stops_a_charge_and_gives_nothing_back",)),
    Mutant("cli-cap-below-spend-accepted", "dpfed_core/cli/budget_cmd.py", "cmd_budget",
           "odo.set_cap(key, args.epsilon, args.delta)", "False", (f"{BREL}::test_cli_set_cap_below_the_spend_is_refused_and_changes_nothing",),
           arg="refuse_below_spent"),
    Mutant("release-without-who", ODO, "BudgetOdometer.reserve",
           "t, who = (now_iso(), actor())", "t, who = (now_iso(), None)",
           (f"{BREL}::test_every_release_and_cap_change_records_who_and_budget_releases_shows_it",)),
    # what a site shares: the federation-wide catalogue without secure aggregation, dp-als
    Mutant("catalogue-share-divided-without-secure-sum", "dpfed_core/evaluation/catalogue_run.py",
           "secure_catalogue_divisor", "config.aggregation != 'secure'", "False",
           ("tests/test_site_items.py::test_without_secure_aggregation_each_site_releases_its_full_noise_histogram"
            "_and_the_run_stays_within_epsilon",)),
    Mutant("merged-key-values-above-the-bound", "dpfed_core/data/dataset.py", "merge_key_columns",
           "np.minimum(out.data, value_max, out=out.data)", "None",
           ("tests/test_site_items.py::test_shared_items_project_and_lift_are_public_maps",)),
    # a declared catalogue that leaves some of the data's items out: only it is shared
    Mutant("declared-catalogue-shares-the-datas-other-items", "dpfed_core/evaluation/experiments.py", "run_method",
           "shares_part_of_declared(dataset, spec)", "False",
           ("tests/test_site_items.py::test_a_declared_catalogue_that_leaves_items_out_shares_it_and_each_site_scores"
            "_its_own",)),
    Mutant("declared-catalogue-names-not-public", "dpfed_core/evaluation/catalogue_run.py",
           "fit_on_declared_catalogue", "SharedItems.from_columns(cols, dataset.n_items, dataset.value_max, public=True)",
           "SharedItems.from_columns(cols, dataset.n_items, dataset.value_max)",
           ("tests/test_site_items.py::test_a_declared_catalogue_that_leaves_items_out_reaches_every_declared_item_of"
            "_every_site",)),
    Mutant("node-shares-read-its-own-items", CLIENT, "_on_keys",
           "declared is None or declared >= rows.shape[1]", "True",
           (f"{APPS}::test_a_nodes_shares_read_the_declared_catalogues_columns_only",)),
    Mutant("node-accepts-a-shard-narrower-than-the-catalogue", CLIENT, "_declared_size",
           "size > width", "False",
           (f"{APPS}::test_a_nodes_shares_read_the_declared_catalogues_columns_only",)),
    Mutant("prototype-release-shaped-by-a-sites-own-items", CLIENT, "_prototype_rows",
           "released_rows(shard.train)[:, :declared].tocsr()", "released_rows(shard.train).tocsr()",
           (f"{APPS}::test_a_prototype_release_on_a_catalogue_that_leaves_items_out_reads_the_catalogues_columns_only",)),
    Mutant("public-report-states-the-items-outside-the-declared-catalogue", "dpfed_core/reporting/report_sections.py",
           "items_text", "if public:\n    return f\"{fmt_num(ds['n_declared'])} declared ({DECLARED_OUTSIDE_WITHHELD})\"",
           "if False:\n    return f\"{fmt_num(ds['n_declared'])} declared ({DECLARED_OUTSIDE_WITHHELD})\"",
           ("tests/test_report.py::test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("coalition-without-the-catalogues-share", "dpfed_core/evaluation/catalogue_run.py", "_on_catalogue",
           "coalition_with_catalogue(config, selected_across, coalition.get('epsilon', math.inf), ledger)",
           "coalition.get('epsilon', math.inf)",
           (COALITION,)),
    # what the CLI and the pages say a DP catalogue will share, before the run
    Mutant("forecast-chance-at-one-entitys-sigma", "dpfed_core/evaluation/catalogue_forecast.py", "forecast_catalogue",
           "ndtr((totals - T) / sigma_sum)", "ndtr((totals - T) / cat._secure_sigma(rho, B))", (FORECAST,)),
    Mutant("forecast-threshold-in-weights-not-users", "dpfed_core/evaluation/catalogue_forecast.py",
           "forecast_catalogue", "float(T * math.sqrt(c))", "float(T)", (FORECAST,)),
    # what the CLI and the pages say a run will take
    Mutant("deployment-hint-without-the-day-it-was-measured", "dpfed_core/evaluation/cost.py", "deployment_measured_on",
           "date[:10] if isinstance(date, str) and len(date) >= 10 else None", "None",
           ("tests/test_cost.py::test_the_deployment_benchmarks_day_is_read_from_its_document",)),
    Mutant("report-utility-states-the-default-split", RSECTIONS, "_split_words", "100 * frac", "20",
           (f"{REPORTT}::test_the_utility_section_states_the_runs_own_split",)),
    Mutant("time-hint-without-production-noise", "dpfed_core/evaluation/cost.py", "_with_production_noise",
           "'noise' not in coef or c.get('simulation', True) or not math.isfinite(eps)", "True", (PRODUCTION_HINT,)),
    Mutant("time-hint-below-the-samplers-own-cost", "dpfed_core/evaluation/cost.py", "_with_production_noise",
           "extra = max(extra, coords * us_per_coordinate() * 1e-06)", "extra = extra", (PRODUCTION_HINT,)),
    Mutant("time-hint-from-a-run-of-other-iterations", "dpfed_core/evaluation/cost.py", "_measured_here",
           "int(p.get('max_iter', 100)) == int(c.get('max_iter', 100))", "True",
           ("tests/test_cost.py::test_predictions_use_the_measurement_of_the_same_run_and_say_when_unmeasured",)),
    Mutant("time-hint-from-the-same-data-with-the-other-catalogue", "dpfed_core/evaluation/cost.py", "_measured_here",
           "int(p['shape'].get('sel', 0)) == int(shape.get('sel', 0))", "True",
           ("tests/test_cost.py::test_predictions_use_the_measurement_of_the_same_run_and_say_when_unmeasured",)),
    Mutant("time-hint-noise-from-all-of-the-datas-items", "dpfed_core/evaluation/cost.py", "shape_of",
           "forecast is not None and forecast.expected_items is not None", "False", (SHARED_ITEMS_HINT,)),
    Mutant("time-hint-noise-fitted-on-one-modes-runs", "dpfed_core/evaluation/cost.py", "fit",
           "same_method = [p for p in points if p['method'] == pts[0]['method']]", "same_method = pts",
           ("tests/test_cost.py::test_noise_is_predicted_from_the_items_a_run_shares_in_every_mode",)),
    Mutant("engine-fingerprint-without-the-library-pins", "dpfed_core/evaluation/code_version.py",
           "engine_fingerprint", "pins.is_file()", "False", (FINGERPRINT,)),
    Mutant("engine-fingerprint-reads-docstrings", "dpfed_core/evaluation/code_version.py", "_without_docstrings",
           "body[0].value.value = ''", "body[0].value.value = body[0].value.value", (FINGERPRINT,)),
    Mutant("engine-fingerprint-counts-the-measurements-readers", "dpfed_core/evaluation/code_version.py",
           "engine_files", "p.relative_to(package).as_posix() not in READERS", "True", (FINGERPRINT,)),
    Mutant("coalition-without-secure-aggregation-not-the-whole-runs", "dpfed_core/evaluation/catalogue_run.py",
           "_on_catalogue", "trust.get('aggregation') != 'secure'", "False",
           (COALITION,)),
    Mutant("catalogue-run-ledger-not-labelled-simulation", "dpfed_core/evaluation/catalogue_run.py", "_on_catalogue",
           "ledger.simulation = bool(getattr(result.ledger, 'simulation', False) or config.simulation)",
           "ledger.simulation = False",
           (COALITION,)),
    Mutant("empty-catalogue-ledger-not-labelled-simulation", "dpfed_core/evaluation/catalogue_run.py",
           "_nothing_learned", "ledger.simulation = bool(config.simulation)", "ledger.simulation = False",
           ("tests/test_site_items.py::test_an_empty_catalogue_leaves_each_site_its_own_model",)),
    Mutant("catalogue-basic-split-delta-not-reduced", "dpfed_core/evaluation/catalogue_run.py",
           "secure_catalogue_budget", "config.delta - row_delta", "config.delta",
           ("tests/test_secure_catalogue.py::test_the_catalogue_and_the_method_share_the_runs_budget_and_no_more",)),
    Mutant("budget-split-stage-spends-whole-rho", "dpfed_core/privacy/budget_split.py", "_plan",
           "share * rho / count", "rho",
           ("tests/test_budget_split.py::"
            "test_two_stage_gaussian_shares_charge_their_split_and_stay_within_the_budget",)),
    Mutant("dp-als-sensitivity-understated", "dpfed_core/federation/dp_als.py", "_als_plan",
           "math.sqrt(2.0)", "1.0",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    Mutant("dp-als-user-factors-not-bounded", "dpfed_core/federation/dp_als.py", "_user_factors",
           "1.0 / np.maximum(norms, 1e-300)", "2.0 / np.maximum(norms, 1e-300)",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    Mutant("dp-als-observed-users-not-weighted", "dpfed_core/federation/dp_als.py", "_observed_statistics",
           "np.where(count > 0, 1.0 / np.sqrt(np.maximum(count, 1.0)), 0.0)", "np.where(count > 0, 1.0, 0.0)",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    Mutant("dp-als-observed-ratings-not-bounded", "dpfed_core/federation/dp_als.py", "_observed_statistics",
           "np.clip(block.data, 0.0, value_max) / value_max", "block.data / value_max",
           (f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity",)),
    # a site's own policy binds whatever the coordinator asks
    Mutant("node-seeded-noise-in-production", CLIENT, "_entity_rngs",
           "method_generator(config.seed, private=private, simulation=config.simulation)", "True", arg="simulation",
           tests=(NODE_STREAMS,)),
    Mutant("catalogue-seeded-in-production", "dpfed_core/evaluation/catalogue_run.py", "_catalogue_generator",
           "method_generator(config.seed, private=True, simulation=False)", "True", arg="simulation",
           tests=(NODE_STREAMS,)),
    Mutant("node-releases-under-a-changed-request", CLIENT, "_require_accepted",
           "str(kept['config']) != str(rec['config']) or int(kept['n-entities']) != int(rec['n-entities'])", "False",
           (NODE_REQUEST,)),
    Mutant("node-releases-a-stage-twice", CLIENT, "_require_accepted",
           "stage in done", "False",
           (NODE_REQUEST,)),
    Mutant("node-draws-on-a-withdrawn-acceptance", CLIENT, "_require_accepted",
           "int(kept.get('withdrawn', 0))", "0", (NODE_REQUEST,)),
    Mutant("site-store-folder-made-by-the-node", SITE, "SitePolicy.check_store_folder",
           "not path.parent.is_dir()", "False",
           (f"{SITET}::test_a_site_whose_store_folder_does_not_exist_refuses_and_never_makes_a_fresh_budget",)),
    Mutant("site-accepts-simulation", SITE, "check",
           "req.simulation and not policy.allow_simulation", "False",
           (f"{SITET}::test_each_rule_refuses_what_it_forbids_and_names_itself",)),
    Mutant("site-ignores-max-epsilon", SITE, "check",
           "req.epsilon > policy.max_epsilon * (1 + 1e-12)", "False",
           (f"{SITET}::test_each_rule_refuses_what_it_forbids_and_names_itself",)),
    Mutant("site-sums-with-other-participants", SITE, "check_secagg",
           "not n_accepted - allowed <= sample_num <= n_accepted", "False",
           (f"{SITET}::test_a_site_sums_only_with_the_sites_it_accepted_the_run_with",)),
    Mutant("site-items-known-by-column-position", SITE, "site_dataset",
           "FederatedDataset.from_parts(X)", "None",
           (f"{SITET}::test_the_sites_people_keep_one_account_when_the_federations_item_list_moves_their_columns",),
           arg="item_ids"),
    Mutant("site-positional-account-left-for-a-new-one", SITE, "accept",
           "dataset_key(ds) != dataset_key(legacy) and odo.knows(legacy)", "False",
           (f"{SITET}::test_a_site_store_of_positional_accounts_keeps_charging_the_same_shard_to_its_account",)),
    Mutant("site-run-not-charged", SITE, "accept",
           "PlannedRelease(kind='run')", "True", (f"{SITET}::test_the_budget_binds_across_runs_in_the_sites_own_odometer",),
           arg="simulation"),
    Mutant("site-delta-not-charged", SITE, "accept",
           "PlannedRelease(kind='run')", "{shard.entity: (eps, 0.0)}",
           (f"{SITET}::test_the_budget_binds_across_runs_in_the_sites_own_odometer",), arg="charges"),
    Mutant("site-charges-a-non-private-run-as-private", SITE, "accept",
           "math.inf if req.non_private or req.simulation else req.epsilon",
           "math.inf if req.simulation else req.epsilon", (SITE_NON_PRIVATE,)),
    Mutant("request-non-private-method-as-private", SITE, "request_of",
           "(not private) or not math.isfinite(eps)", "not math.isfinite(eps)", (SITE_NON_PRIVATE,)),
    Mutant("site-policy-accepts-a-delta-of-one-in-a-hundred", SITE, "_checked_policy",
           "k.endswith('delta') and v >= 0.01", "False",
           (f"{SITET}::test_a_bad_policy_file_is_one_error_naming_the_key",)),
    Mutant("site-accepts-secagg-threshold-one", SITE, "check_secagg",
           "share_num - threshold > allowed or threshold < 2", "share_num - threshold > allowed",
           (f"{SITET}::test_secagg_key_shares_follow_a_public_rule_that_grows_slower_than_the_sites",)),
    Mutant("site-max-epsilon-read-as-its-budget", SITE, "check",
           "req.epsilon > policy.max_epsilon * (1 + 1e-12)", "req.epsilon > policy.budget_epsilon * (1 + 1e-12)",
           (f"{SITET}::test_each_rule_refuses_what_it_forbids_and_names_itself[epsilon just above]",)),
    Mutant("site-max-epsilon-with-slack", SITE, "check",
           "req.epsilon > policy.max_epsilon * (1 + 1e-12)", "req.epsilon > policy.max_epsilon * 2",
           (f"{SITET}::test_each_rule_refuses_what_it_forbids_and_names_itself[epsilon just above]",)),
    Mutant("site-bounds-low-end-unchecked", SITE, "check", "not lo <= v <= hi", "not v <= hi", (SITE_BOUNDS,)),
    Mutant("request-without-the-shards-value-bound", SITE, "request_of",
           "{'value_max': float(value_max)}", "{}", (SITE_BOUNDS,)),
    Mutant("site-checks-only-the-bounds-the-run-names", SITE, "request_of", "bounds.update(derived)", "None",
           (SITE_DERIVED,)),
    Mutant("site-fails-on-a-request-its-method-cannot-be-built-from", SITE, "request_of",
           "own, problem = ({}, ' '.join(str(exc).split()))", "raise", (BAD_PARAMETER,)),
    Mutant("site-weighs-a-request-its-method-cannot-be-built-from", SITE, "check", "req.parameter_error", "''",
           (BAD_PARAMETER,), nth=0),
    Mutant("site-fails-on-a-method-it-does-not-have", SITE, "request_of", "cls = None", "raise",
           ("tests/test_deployment_apps.py::test_a_request_for_a_method_the_node_does_not_have_is_refused_without_"
            "listing_the_nodes_methods",)),
    Mutant("site-decides-without-the-checks-its-release-makes", HOOKS, "node_method", "check()", "None",
           (f"{BAD_PARAMETER}[checked by the release]",)),
    Mutant("site-charges-its-max-delta-not-the-runs", SITE, "accept",
           "0.0 if math.isinf(eps) else req.delta", "0.0 if math.isinf(eps) else policy.max_delta", (SITE_DELTA,)),
    Mutant("site-delta-budget-change-ignored", SITE, "accept",
           "(cap_e, cap_d) != (policy.budget_epsilon, policy.budget_delta)", "cap_e != policy.budget_epsilon",
           (SITE_DELTA,)),
    Mutant("secagg-tolerance-from-the-run-alone", SITE, "check_secagg",
           "min(int(policy.max_dropouts), int(max_dropouts))", "int(max_dropouts)", (SETUP_DROPOUTS,)),
    Mutant("secagg-rule-from-the-sites-most-dropouts", SITE, "check_secagg",
           "secagg_shares(sample_num, max_dropouts)", "secagg_shares(sample_num, policy.max_dropouts)",
           (SETUP_DROPOUTS,)),
    Mutant("site-policy-nan-epsilon-accepted", SITE, "_checked_policy", "math.isnan(v)", "False", (BAD_POLICY,)),
    Mutant("site-policy-zero-budget-accepted", SITE, "_checked_policy", "k.endswith('epsilon') and v == 0", "False",
           (BAD_POLICY,)),
    Mutant("site-policy-boolean-dropouts-accepted", SITE, "_checked_policy",
           "kind is int and isinstance(raw[key], bool)", "False", (BAD_POLICY,)),
    Mutant("site-policy-method-not-a-name-accepted", SITE, "_checked_policy",
           "not all((isinstance(m, str) for m in raw['methods']))", "False", (BAD_POLICY,)),
    Mutant("site-policy-default-max-delta-loose", SITE, "_checked_policy",
           "num.get('max_delta', 1e-05)", "num.get('max_delta', 0.001)", (STRICT_DEFAULTS,)),
    Mutant("site-policy-default-budget-delta-loose", SITE, "_checked_policy",
           "num.get('budget_delta', 0.0001)", "num.get('budget_delta', 0.009)", (STRICT_DEFAULTS,)),
    Mutant("site-store-name-leaves-its-folder", SITE, "SitePolicy.store_for",
           "c.isalnum() or c in '-_.'", "c.isalnum() or c in '-_./'", (STRICT_DEFAULTS,)),
    Mutant("node-decides-on-a-default-value-bound", CLIENT, "decide",
           "site_policy.request_of(config, H, shard.value_max, catalogue_from_json(str(rec['config'])))",
           "site_policy.request_of(config, H, 1.0, catalogue_from_json(str(rec['config'])))", (NODE_DECIDES,)),
    Mutant("node-derives-the-row-bound-without-its-catalogues-size", CLIENT, "decide",
           "site_policy.request_of(config, H, shard.value_max)", "None", (NODE_DERIVED,), arg=4),
    Mutant("node-accepts-a-shard-of-another-federation", CLIENT, "_load", "shard.n_entities != n_entities", "False",
           (NODE_DECIDES,)),
    Mutant("node-redecides-another-request-as-accepted", CLIENT, "decide", "_require_accepted(context, rec)", "None",
           (NODE_DECIDES,)),
    Mutant("node-draws-after-it-withdrew", CLIENT, "withdraw",
           "ConfigRecord({**dict(kept.items()), 'withdrawn': 1})", "kept",
           (f"{NODE_WITHDRAWS}[nothing drawn]", f"{NODE_WITHDRAWS}[a stage released]")),
    Mutant("site-refunds-a-run-it-drew-in", SITE, "_decide_withdrawal", "_drawn(con, run, coordinator, entity)", "[]",
           (f"{NODE_WITHDRAWS}[a stage released]",
            f"{SITET}::test_a_site_gives_its_charge_back_only_when_its_own_record_says_it_drew_nothing",
            SITE_WITHDRAWS)),
    Mutant("site-answers-a-withdrawal-twice", SITE, "_decide_withdrawal", "_withdrawn(con, run, coordinator, entity)",
           "False", (SITE_WITHDRAWS,)),
    Mutant("node-draws-without-marking-its-store", CLIENT, "_require_accepted", "site_policy.claim_draw(policy)",
           "None", (f"{NODE_WITHDRAWS}[a stage released]",)),
    Mutant("site-draws-after-its-operator-withdrew", SITE, "claim_draw", "_withdrawn(con, run, coordinator, entity)",
           "False", (SITE_WITHDRAWS,)),
    Mutant("site-composes-its-runs-by-their-epsilons-summed", SITE, "accept", "planned_rho(req.method, eps, dlt)",
           "(None, False)", (f"{SITET}::test_the_budget_binds_across_runs_in_the_sites_own_odometer",)),
    Mutant("site-lowered-below-its-spend-tells-the-coordinator-its-balance", SITE, "accept",
           "odo.set_cap(key, policy.budget_epsilon, policy.budget_delta)", "True",
           (f"{SITET}::test_a_policy_that_lowers_the_budget_below_the_spend_refuses_by_the_rule_and_keeps_the_"
            "balance_home",), arg="refuse_below_spent"),
    Mutant("node-refusing-a-share-by-its-coalition-cap-keeps-it-drawn", CLIENT, "_secure_share",
           "site_policy.unclaim_draw(policy, shard.entity, group)", "None", (SITE_COALITION,)),
    Mutant("site-operator-refunds-every-site-of-its-store", SITE, "withdraw_by_site",
           "'SELECT r.id, r.dataset_key FROM releases r JOIN datasets d ON d.key = r.dataset_key WHERE r.operation "
           "= ? AND r.status = \\'reserved\\' AND d.name = ? ORDER BY r.id'",
           "'SELECT r.id, r.dataset_key FROM releases r JOIN datasets d ON d.key = r.dataset_key WHERE r.operation "
           "= ? AND r.status = \\'reserved\\' AND (d.name = ? OR 1) ORDER BY r.id'",
           (f"{SITET}::test_a_site_withdrawing_from_a_store_it_shares_gives_back_its_own_charge_only",)),
    Mutant("node-releases-prototypes-twice", CLIENT, "round1",
           "_require_accepted(context, msg.content['config'], 'round1')",
           "_require_accepted(context, msg.content['config'])",
           (f"{APPS}::test_a_prototype_release_is_given_once_per_accepted_run",)),
    Mutant("node-setup-checked-against-the-sites-most-dropouts", CLIENT, "site_policy_mod",
           "config_from_json(str(kept['config'])).max_dropouts", "_policy(context).max_dropouts",
           (f"{APPS}::test_a_secure_sums_setup_is_checked_against_the_accepted_runs_dropouts_not_the_sites_most",),
           nth=0),
    Mutant("node-unmask-checked-against-the-sites-most-dropouts", CLIENT, "site_policy_mod",
           "config_from_json(str(kept['config'])).max_dropouts", "_policy(context).max_dropouts",
           ("tests/test_deployment_apps.py::test_a_site_never_reveals_both_key_shares_of_one_node_nor_unmasks_a_sum_"
            "short_of_its_noise",), nth=1),
    Mutant("node-simulation-stream-of-site-zero", CLIENT, "_summable_rng", "_entity_rngs(config, True, H)[index]",
           "_entity_rngs(config, True, H)[0]",
           (f"{APPS}::test_each_site_of_a_simulation_draws_the_in_process_runs_stream_of_its_own_index",)),
    Mutant("shard-unpickled", SHARDS, "load_shard", "np.load(p, allow_pickle=False)", "True", (SHARD_FORMAT,),
           arg="allow_pickle"),
    Mutant("features-non-finite-accepted", SHARDS, "load_item_features", "not np.all(np.isfinite(F))", "False",
           (SHARD_FORMAT,)),
    Mutant("features-without-a-name-per-column", SHARDS, "load_item_features",
           "F.shape != (int(n_items), len(names))", "F.shape[0] != int(n_items)", (SHARD_FORMAT,)),
    Mutant("site-policies-of-another-count-accepted", LAUNCHER, "_policy_paths", "len(paths) != n", "False",
           (POLICY_PATHS,)),
    Mutant("site-policy-path-with-a-quote-accepted", LAUNCHER, "_policy_paths", "\"'\" in str(p)", "False",
           (POLICY_PATHS,)),
    Mutant("refused-run-never-withdrawn", SERVER, "_Run.withdraw", "not nodes", "True",
           (f"{SITET}::test_one_refusing_site_stops_the_run_before_any_site_draws",)),
    Mutant("deploy-local-silently-insecure", DEPLOY_CMD, "cmd_deploy_local",
           "deployment_runner(workdir=args.workdir)", "True",
           (f"{SITET}::test_deploy_local_writes_a_policy_matching_the_run_or_gives_every_site_the_one_named",),
           arg="insecure"),
    Mutant("site-policy-cannot-raise-its-budget", SITE, "accept",
           "odo.set_cap(key, policy.budget_epsilon, policy.budget_delta)", "False", (SITE_DELTA,), arg="confirm_raise"),
    Mutant("node-reports-the-last-shares-ledger-rows-only", CLIENT, "_secure_share",
           "loads(str(kept['ledger'])) if kept is not None and group[0] != first else []", "[]",
           (SITE_COALITION,)),
    Mutant("node-withdraws-a-request-it-never-accepted", CLIENT, "withdraw", "_require_accepted(context, rec)", "None",
           (f"{NODE_WITHDRAWS}[nothing drawn]",)),
    Mutant("shard-test-users-not-the-entitys-rows", SHARDS, "write_shards",
           "test_users[(test_users >= sl.start) & (test_users < sl.stop)] - sl.start",
           "test_users[(test_users >= sl.start) & (test_users < sl.stop)]", (SHARDS_WRITTEN,)),
    Mutant("shard-of-a-sites-export-counts-its-own-entities", SHARDS, "write_shards",
           "dataset.n_entities if declared is None else len(declared)", "dataset.n_entities", (SHARDS_WRITTEN,)),
    Mutant("secure-sum-released-with-fewer-than-h-minus-d", SERVER, "_SecureSum.__call__",
           "_SumOnly.n_active < survivors or _SumOnly.n_active == 0", "_SumOnly.n_active == 0", (SUM_OF_CONTRIBUTORS,)),
    Mutant("secure-sum-scaled-by-h-not-its-contributors", SERVER, "_SecureSum.__call__",
           "to_grid(mean * _SumOnly.n_active)", "to_grid(mean * H)", (SUM_OF_CONTRIBUTORS,)),
    Mutant("secagg-threshold-from-the-live-nodes", SERVER, "_SecureSum.__call__",
           "secagg_threshold(len(nodes), int(method.max_dropouts), H)",
           "secagg_threshold(len(nodes), int(method.max_dropouts), len(nodes))", (SUM_OF_CONTRIBUTORS,)),
    Mutant("server-proceeds-without-a-sites-decision", SERVER, "_Run.site_decisions",
           "self.transport.check_replies(msgs, replies, 'site policy decisions')", "None", (UNDECIDED,)),
    Mutant("undecided-run-never-withdrawn", SERVER, "_Run.site_decisions",
           "self.stop_before_any_share(str(exc), replies)", "DeploymentRunError(str(exc), ledger_rows=0)",
           (UNDECIDED,)),
    Mutant("failed-run-never-withdrawn", SERVER, "_Run.run",
           "self.withdraw([n for n in nodes if n not in self.dropped], WITHDRAW_AFTER_FAILURE, "
           "min(self.transport.round_timeout, WITHDRAW_TIMEOUT_S))", "''",
           ("tests/test_deployment_apps.py::test_a_run_that_fails_after_every_site_accepted_tells_the_sites_still_"
            "in_it_and_says_what_they_answered",
            "tests/test_site_policy.py::test_a_run_that_fails_after_the_decisions_gives_back_the_charge_of_each_"
            "site_that_drew_nothing")),
    Mutant("coalition-epsilon-without-the-catalogues-share", CLIENT, "_run_coalition",
           "entity_coalition(config, H, float(coalition), rhos + (planned or []))",
           "(float(coalition), float(method.delta), ZCDP)", (SITE_COALITION,)),
    Mutant("site-decides-without-its-coalition-cap", SITE, "check",
           "req.coalition_epsilon is not None and req.coalition_epsilon > policy.max_coalition_epsilon * "
           "(1 + COALITION_PLAN_SLACK)", "False",
           (COALITION_PLAN,)),
    Mutant("site-plans-its-coalition-without-the-other-sites", SITE, "planned_coalition_epsilon",
           "int(n_entities) - int(config.max_dropouts) if config.aggregation == 'secure' else 1", "1",
           (COALITION_PLAN,)),
    Mutant("catalogue-share-checked-without-the-methods-planned-share", CLIENT, "_run_coalition",
           "entity_coalition(config, H, None, rhos + planned)", "entity_coalition(config, H, None, rhos)",
           (SITE_COALITION,)),
    Mutant("site-coalition-by-its-shares-epsilon-summed", CATRUN, "entity_coalition",
           "getattr(method_class(config.method), 'zcdp_budget', False) and rhos and all((r is not None and "
           "math.isfinite(r) for r in rhos))", "False", (SITE_COALITION,)),
    Mutant("node-marks-a-malformed-stage-label-drawn", CLIENT, "_secure_share",
           "_require_accepted(context, fitins.config, group, claim=False)",
           "_require_accepted(context, fitins.config, group, shard)", (MALFORMED_SHARE,)),
    Mutant("node-accepts-a-catalogue-its-shard-cannot-hold", CLIENT, "decide", "_declared_size(rec, shard)", "None",
           (MALFORMED_SHARE,)),
    Mutant("node-fits-a-broadcast-of-any-shape", CLIENT, "_broadcast_V",
           "V.ndim != 2 or V.shape[0] != rows or V.shape[1] < 1", "False", (FAILURE_TEXT,)),
    Mutant("node-forwards-every-error-text", CLIENT, "_public", "isinstance(exc, DpfedError)", "True",
           (FAILURE_TEXT,)),
    # what users read about the guarantee, and what stays on disk for the operator only
    Mutant("public-report-first-screen-of-the-analysts", "dpfed_core/reporting/report.py", "build_report",
           "_overview(run_doc, public)", "_overview(run_doc, False)",
           ("tests/test_report.py::test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("refusal-names-where-a-probes-people-are", ODO, "BudgetOdometer._check",
           "ident.alias_of is not None", "False",
           ("tests/test_odometer.py::test_a_refused_probe_of_a_few_stored_people_names_no_stored_entity_and_leaves_no_row",)),
    Mutant("refused-probe-registered-in-the-store", "dpfed_core/evaluation/service.py", "_open_account",
           "odometer.account_key(dataset)", "odometer.register(dataset)",
           ("tests/test_odometer.py::test_a_refused_probe_of_a_few_stored_people_names_no_stored_entity_and_leaves_no_row",)),
    Mutant("no-test-user-advice-names-a-fraction-that-cannot-help", "dpfed_core/evaluation/service.py",
           "no_test_users_warning", "most > config.n_hidden", "True",
           ("tests/test_cli.py::test_hidden_entries_above_every_users_entries_say_the_largest_value_that_draws_test_users",)),
    Mutant("verdict-even-where-no-sign-test-could-tell", "dpfed_core/evaluation/verdicts.py", "_count_phrase",
           "sign_test_p(r['better'] + r['worse'], 0) >= SIGN_TEST_LEVEL", "False",
           ("tests/test_verdicts.py::test_entity_verdict_against_local_and_individual_and_nan_is_no_test_users",)),
    Mutant("report-states-an-edited-guarantee", "dpfed_core/reporting/report.py", "build_report",
           "check_stated_guarantee(run_doc, 'the run document')", "None",
           ("tests/test_report.py::test_a_document_whose_stated_guarantee_is_not_its_ledgers_is_refused",)),
    Mutant("report-states-a-guarantee-per-entity-unchecked", "dpfed_core/reporting/report.py", "check_stated_guarantee",
           "not same(per_entity[e], composed.get(e, (0.0, 0.0)))", "False",
           ("tests/test_report.py::test_a_document_whose_stated_guarantee_is_not_its_ledgers_is_refused",)),
    Mutant("public-report-states-the-private-item-count", "dpfed_core/reporting/report_sections.py", "items_text",
           "public and ds.get('item_source') != 'declared'", "False",
           ("tests/test_report.py::test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("dashboard-says-in-process-for-a-deployed-sum", "dpfed_core/ui/tables.py", "guarantee_text",
           "trust.get('in_process', True)", "True",
           ("tests/test_privacy_labels.py::test_the_dashboard_says_where_a_secure_sum_was_formed",)),
    Mutant("dashboard-guarantee-without-the-float-sampler-note", "dpfed_core/ui/tables.py", "guarantee_text",
           "any((x != PRODUCTION_SAMPLER_LABEL for x in p.get('samplers') or []))", "False", (DASH_GUARANTEE,)),
    Mutant("dashboard-guarantee-without-its-warnings", "dpfed_core/ui/tables.py", "guarantee_text",
           "p.get('warnings') or []", "[]", (DASH_GUARANTEE,)),
    Mutant("budget-line-names-the-least-spent-entity", "dpfed_core/ui/budget.py", "budget_line",
           "max(bal, key=lambda b: b.spent_epsilon)", "min(bal, key=lambda b: b.spent_epsilon)", (BUDGET_LINE,)),
    Mutant("budget-line-without-the-non-private-releases", "dpfed_core/ui/budget.py", "budget_line",
           "sum((b.void for b in bal))", "0", (BUDGET_LINE,)),
    Mutant("site-command-without-the-delta-spent", "dpfed_core/cli/site_cmd.py", "budget_line",
           "_fmt(b['spent_delta'])", "_fmt(0.0)", (SITE_COMMAND,)),
    Mutant("site-command-without-a-voided-guarantee", "dpfed_core/cli/site_cmd.py", "budget_line",
           "b['void']", "False", (SITE_COMMAND,), nth=1),
    Mutant("site-command-counts-non-private-runs-as-dp", "dpfed_core/cli/site_cmd.py", "budget_line",
           "b['n_releases'] - n", "b['n_releases']", (SITE_COMMAND,)),
    Mutant("cli-run-without-its-trust-model", "dpfed_core/cli/main.py", "print_run_statement",
           "print(f\"trust model: {trust_text(doc['privacy'])}\")", "None", (CLI_RUN_PRINTS,)),
    Mutant("cli-run-without-its-warnings", "dpfed_core/cli/main.py", "print_run_statement",
           "doc.get('warnings', [])", "[]", (CLI_RUN_PRINTS,)),
    Mutant("cli-dry-run-always-fits", "dpfed_core/cli/budget_cmd.py", "dry_run",
           "'fits' if p['fits'] else 'would be REFUSED'", "'fits'",
           ("tests/test_odometer.py::test_cli_dry_run_prints_the_planned_charge_and_charges_nothing",)),
    Mutant("report-coalition-row-states-the-servers-epsilon", "dpfed_core/reporting/report_sections.py",
           "coalition_text", "t.get('against_server_and_other_entities') or {}", "t.get('against_server') or {}",
           ("tests/test_report.py::test_summary_states_the_trust_model_and_the_coalition_epsilon",)),
    Mutant("report-calls-a-weak-epsilon-strong", "dpfed_core/reporting/report_sections.py", "epsilon_in_words",
           "eps <= 1", "eps <= 10", ("tests/test_report.py::test_epsilon_in_words_names_the_strength_the_text_defines",)),
    Mutant("simulation-assumptions-say-the-noise-is-secret", "dpfed_core/privacy/statement.py", "assumptions",
           "simulation", "False",
           ("tests/test_privacy_labels.py::test_simulation_run_is_labelled_in_json_ledger_dashboard_and_report",)),
    Mutant("private-keys-readable-by-others", "dpfed_core/deployment/security.py", "_write_private",
           "os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)",
           "os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)",
           ("tests/test_deployment_inputs.py::test_private_keys_are_the_owners_only_and_public_ones_readable",)),
    Mutant("run-folder-readable-by-others", "dpfed_core/deployment/launcher.py", "GuardedFolder._open_dir",
           "os.chmod(self.dir, 0o700)", "os.chmod(self.dir, 0o755)",
           ("tests/test_deployment_inputs.py::test_a_run_without_workdir_gets_a_private_folder",)),
    # the Flower internals a local deployment replaces: replaced only where they are the pinned code, each
    # other state named (a wrong "ok" runs dpfed's code on a Flower it was not written for)
    Mutant("flower-internal-of-another-version-replaced", FLOWER_INT, "check", "found != PINNED[item.package]", "False",
           (f"{NODET}::test_a_changed_internal_keeps_the_stock_code_and_says_why",)),
    Mutant("flower-internal-changed-code-replaced", FLOWER_INT, "check", "got != item.fingerprint", "False",
           (f"{NODET}::test_a_changed_internal_keeps_the_stock_code_and_says_why",)),
    Mutant("flower-internal-replaced-when-the-check-fails", FLOWER_INT, "usable", "why is None", "True",
           (f"{NODET}::test_a_changed_internal_keeps_the_stock_code_and_says_why",)),
    Mutant("flower-internal-kept-stock-unsaid", FLOWER_INT, "usable", "name not in _WARNED", "False",
           (f"{NODET}::test_a_changed_internal_keeps_the_stock_code_and_says_why",)),
    Mutant("flower-internal-taken-as-ours-whatever-is-there", FLOWER_INT, "check",
           "name in _REPLACED and obj is _REPLACED[name]", "name in _REPLACED", (INTERNAL_STATES,)),
    Mutant("flower-internal-warned-at-every-use", FLOWER_INT, "usable", "_WARNED.add(name)", "None",
           (INTERNAL_STATES,)),
    Mutant("flower-missing-taken-as-the-pinned-version", FLOWER_INT, "check",
           "return f'{item.package} is not installed'", "return None", (INTERNAL_STATES,)),
    Mutant("flower-internal-gone-crashes-the-check", FLOWER_INT, "check", "(ImportError, AttributeError)", "()",
           (INTERNAL_STATES,)),
    Mutant("flower-internals-report-says-ok-for-all", FLOWER_INT, "report", "check(name) or 'ok'", "'ok'",
           (INTERNAL_STATES,)),
    Mutant("flower-replacement-not-recorded", FLOWER_INT, "replaced", "_REPLACED[name] = obj", "pass",
           (INTERNAL_STATES,)),
    # every refusal's text: one line, parameters named as the front end names them, long cells cut
    Mutant("error-message-keeps-its-line-breaks", ERRORS, "render_message", "' '.join(str(message).split())",
           "str(message)", (ERR_RENDER,)),
    Mutant("error-message-repeats-a-long-cell-whole", ERRORS, "render_message",
           "cut_long_values(' '.join(str(message).split()))", "' '.join(str(message).split())", (ERR_CUT,)),
    Mutant("error-message-rewrites-plain-words", ERRORS, "render_message.sub", "not eq and '_' not in key", "False",
           (ERR_RENDER,)),
    Mutant("error-label-given-without-its-colon", ERRORS, "render_message.sub",
           "new + (' ' if new.startswith('-') else ': ')", "new + ' '", (ERR_RENDER,)),
    Mutant("error-flag-given-with-a-colon", ERRORS, "render_message.sub",
           "new + (' ' if new.startswith('-') else ': ')", "new + ': '", (ERR_RENDER,)),
    Mutant("error-long-cell-shown-whole", ERRORS, "cut_long_values.cut", "inner[:SHOWN_CHARS]", "inner", (ERR_CUT,)),
    Mutant("error-long-cell-length-counts-its-quotes", ERRORS, "cut_long_values.cut", "len(inner)", "len(v)",
           (ERR_CUT,)),
    Mutant("error-parameter-lost", ERRORS, "DpfedError.__init__", "self.param = param", "self.param = None",
           (ERR_RENDER,)),
    Mutant("option-error-in-the-singular-for-several", ERRORS, "OptionError._text", "len(bad) > 1", "False",
           (ERR_OPTIONS,)),
    Mutant("option-error-for-a-source-taking-none-says-accepted", ERRORS, "OptionError._text",
           "'accepted: ' + ', '.join(accepted) if accepted else 'it takes none'", "'accepted: ' + ', '.join(accepted)",
           (ERR_OPTIONS,)),
    Mutant("option-error-names-no-parameter", ERRORS, "OptionError.__init__", "self.bad[0]", "None", (ERR_OPTIONS,)),
    Mutant("option-error-offers-a-python-only-option", ERRORS, "OptionError.render",
           "{names[a] for a in self.accepted if a in names}", "{names.get(a, a) for a in self.accepted}",
           (ERR_OPTIONS,)),
    Mutant("option-error-names-the-python-parameter", ERRORS, "OptionError.render",
           "[names.get(b, b) for b in self.bad]", "list(self.bad)", (ERR_OPTIONS,)),
    Mutant("deployment-error-forgets-no-site-drew", ERRORS, "DeploymentError.__init__",
           "self.ledger_rows = ledger_rows", "self.ledger_rows = None",
           ("tests/test_error_messages.py::test_a_deployment_error_says_whether_any_site_drew_noise",)),
    # the clinic generator with fewer hospitals than specialties; the command line of a run, every digit of it
    Mutant("clinic-with-fewer-hospitals-than-specialties-fails", "dpfed_core/data/synthetic.py", "make_clinic",
           "min(len(specialties), n_hospitals)", "len(specialties)",
           ("tests/test_synthetic.py::test_fewer_hospitals_than_specialties_take_the_first_ones_listed",)),
    Mutant("clinic-gives-the-last-specialties-listed", "dpfed_core/data/synthetic.py", "make_clinic",
           "list(specialties)[:k]", "list(specialties)[-k:]",
           ("tests/test_synthetic.py::test_fewer_hospitals_than_specialties_take_the_first_ones_listed",)),
    Mutant("command-line-rounds-a-typed-epsilon", "dpfed_core/evaluation/defaults.py", "_arg",
           "repr(value).removesuffix('.0')", "f'{value:g}'", (CLI_LINE,)),
    Mutant("command-line-writes-whole-numbers-with-a-point", "dpfed_core/evaluation/defaults.py", "_arg",
           "repr(value).removesuffix('.0')", "repr(value)", (CLI_LINE,)),
    # the Simulation Engine: refused without the backend it needs, said as what carried the messages, and
    # each simulated node on its own shard
    Mutant("sim-engine-unknown-backend-accepted", SIM_ENGINE, "available", "backend not in BACKENDS", "False",
           (SIM_GATE,)),
    Mutant("sim-engine-ray-accepted-without-ray", SIM_ENGINE, "available",
           "importlib.util.find_spec('ray') is None", "False", (SIM_GATE,)),
    Mutant("sim-engine-transport-names-ray-for-inprocess", SIM_ENGINE, "transport", "backend == 'inprocess'", "False",
           (SIM_GATE,)),
    Mutant("sim-engine-policies-not-passed", SIM_ENGINE, "node_environment",
           "env[SIM_POLICIES_ENV] = json.dumps(job['policies'])", "pass", (SIM_NODES,)),
    Mutant("sim-engine-features-not-passed", SIM_ENGINE, "node_environment",
           "env[SIM_FEATURES_ENV] = json.dumps(job['features'])", "pass", (SIM_NODES,)),
    Mutant("simulated-node-reads-its-neighbours-shard", "dpfed_core/deployment/client_app.py", "_simulated",
           "entries[int(pid)]", "entries[(int(pid) + 1) % len(entries)]", (SIM_NODES,)),
    Mutant("simulated-node-past-the-list-reads-the-last", "dpfed_core/deployment/client_app.py", "_simulated",
           "0 <= int(pid) < len(entries)", "0 <= int(pid)", (SIM_NODES,)),
    # the Simulation Engine's in-process backend: a ClientApp never shares an object with the engine
    Mutant("inprocess-clientapp-given-the-engines-objects", INPROC, "InProcessBackend.process_message",
           "message, context = _copy(message, context)", "pass", (INPROC_COPIES,)),
    Mutant("inprocess-engine-given-the-clientapps-objects", INPROC, "InProcessBackend.process_message",
           "_copy(out, context)", "(out, context)", (INPROC_COPIES,)),
    Mutant("inprocess-clientapp-failure-escapes-flowers-contract", INPROC, "InProcessBackend.process_message",
           "raise ClientAppException(str(ex)) from ex", "raise", (INPROC_COPIES,)),
    Mutant("inprocess-load-failure-wrapped", INPROC, "InProcessBackend.process_message",
           "LoadClientAppError", "ZeroDivisionError", (INPROC_COPIES,)),
    Mutant("inprocess-workers-ignore-the-configured-cpus", INPROC, "InProcessBackend.__init__",
           "init_args.get('num_cpus') or os.cpu_count() or 1", "os.cpu_count() or 1", (INPROC_COPIES,)),
    Mutant("inprocess-runs-without-a-clientapp", INPROC, "InProcessBackend.process_message",
           "self.app_fn is None", "False", (INPROC_COPIES,)),
    # --port-range and the private folders of earlier killed runs
    Mutant("port-range-below-1024-accepted", LAUNCHER, "parse_port_range", "1024 <= lo <= hi <= 65535",
           "1023 <= lo <= hi <= 65535", (PORT_RANGE,)),
    Mutant("port-range-above-65535-accepted", LAUNCHER, "parse_port_range", "1024 <= lo <= hi <= 65535",
           "1024 <= lo <= hi", (PORT_RANGE,)),
    Mutant("port-range-high-below-low-accepted", LAUNCHER, "parse_port_range", "1024 <= lo <= hi <= 65535",
           "1024 <= lo and hi <= 65535", (PORT_RANGE,)),
    Mutant("port-range-last-port-never-used", LAUNCHER, "free_ports", "range(lo, hi + 1)", "range(lo, hi)",
           (PORT_RANGE,)),
    Mutant("port-in-use-handed-out", LAUNCHER, "free_ports", "continue", "pass", (PORT_RANGE,)),
    Mutant("port-range-error-miscounts-the-supernodes", LAUNCHER, "free_ports", "n - 1", "n", (PORT_RANGE,)),
    Mutant("folder-without-an-owner-swept", LAUNCHER, "sweep_stale",
           "owner.exists() and not _pid_alive(int(owner.read_text().split()[0]))",
           "not owner.exists() or not _pid_alive(int(owner.read_text().split()[0]))",
           ("tests/test_deployment_inputs.py::test_only_a_deployment_folder_whose_named_owner_is_gone_is_swept",)),
    Mutant("another-users-deployment-folder-swept", LAUNCHER, "sweep_stale",
           "not d.is_dir() or d.stat().st_uid != os.getuid()", "not d.is_dir()", (KEPT_FOLDER,)),
    Mutant("owner-we-may-not-signal-called-gone", LAUNCHER, "_pid_alive", "True", "False", (KEPT_FOLDER,), nth=1),
    # what users read as quality numbers and what each site scores: metrics, verdicts, the site's blend, the split
    Mutant("precision-divided-by-hidden-entries", METRICS, "ranking_metrics",
           "np.where(has, n_hits / n, 0.0)", "np.where(has, n_hits / np.maximum(n_hidden, 1), 0.0)", (RANK_DEFS,)),
    Mutant("recall-divided-by-n", METRICS, "ranking_metrics",
           "n_hits / np.maximum(n_hidden, 1)", "n_hits / n", (RANK_DEFS,)),
    Mutant("ideal-dcg-over-n-not-hidden", METRICS, "ranking_metrics",
           "ideal_cum[np.minimum(n_hidden, n_eff)]", "ideal_cum[np.full_like(n_hidden, n_eff)]", (RANK_DEFS,)),
    Mutant("test-rmse-per-user-not-per-entry", METRICS, "evaluate.summarise",
           "ratio(te_sse[mask].sum(), te_cnt[mask].sum())", "ratio(te_sse[mask].sum(), nt)", (POOLED,)),
    Mutant("mar-mean-of-users-not-pooled", METRICS, "evaluate.summarise",
           "ratio(per_user['mar_num'][t].sum(), per_user['mar_den'][t].sum())",
           "ratio(np.sum(per_user['mar_num'][t] / np.maximum(per_user['mar_den'][t], 1e-300)), nt)", (POOLED,)),
    Mutant("precision-averaged-over-every-user", METRICS, "evaluate.summarise",
           "ratio(per_user['precision'][t].sum(), nt)", "ratio(per_user['precision'][t].sum(), mask.sum())", (POOLED,)),
    Mutant("users-without-hidden-entries-counted", METRICS, "evaluate.summarise",
           "t = mask & has_test", "t = mask", (POOLED,)),
    Mutant("stored-zero-is-a-hidden-event", METRICS, "set_metrics",
           "test = test.multiply(test > 0).tocsr()", "test = test.tocsr()",
           ("tests/test_set_metrics.py::test_a_stored_zero_in_the_test_rows_is_no_hidden_event",)),
    # one tie rule serves the verdict's counts and the Recommend page's word: one mutant, both tests
    Mutant("verdict-word-by-a-bare-majority", VERDICTS, "_word",
           "p >= SIGN_TEST_LEVEL", "False",
           (f"{VERDICTT}::test_the_headline_word_needs_a_majority_beyond_chance",)),
    Mutant("sweep-verdict-word-by-the-sign-test", VERDICTS, "_word",
           "2 * beyond_interval_p(side, r.get('tested', r['better'] + r['worse'] + r['tie'])) if over_seeds else "
           "sign_test_p(r['better'], r['worse'])", "sign_test_p(r['better'], r['worse'])",
           (f"{VERDICTT}::test_over_seeds_the_word_needs_more_entities_beyond_their_interval_than_chance_gives",)),
    Mutant("verdict-tie-band-absolute", VERDICTS, "_is_tie",
           "np.abs(d) < TIE_FRACTION * np.maximum(np.abs(base), 1e-12)", "np.abs(d) < TIE_FRACTION",
           (f"{VERDICTT}::test_a_tie_is_a_difference_below_half_a_percent_of_the_baselines_value", ONE_WORD)),
    Mutant("one-entitys-word-turned-around", VERDICTS, "compare_one",
           "'better' if d > 0 else 'worse'", "'worse' if d > 0 else 'better'", (ONE_WORD,)),
    Mutant("verdict-sentence-counts-the-better-ones", VERDICTS, "_count_phrase",
           "n = r['better'] if r['word'] == 'better' else r['worse']", "n = r['better']",
           (f"{VERDICTT}::test_the_sentence_leads_with_the_majority_and_its_count",)),
    Mutant("sweep-verdict-at-one-standard-error", VERDICTS, "sweep_entity_verdict",
           "abs(d.mean()) > t_critical(len(d) - 1) * se", "abs(d.mean()) > 2 * se", (SWEEP_VERDICT,)),
    Mutant("sweep-verdict-one-seed-decides", VERDICTS, "sweep_entity_verdict",
           "len(d) > 1 and abs(d.mean()) > t_critical(len(d) - 1) * se",
           "len(d) == 1 and d.mean() != 0 or (len(d) > 1 and abs(d.mean()) > t_critical(len(d) - 1) * se)",
           (SWEEP_VERDICT,)),
    Mutant("sweep-verdict-reads-every-epsilon", VERDICTS, "sweep_entity_verdict",
           "fed = per_entity(method, epsilon)", "fed = per_entity(method, None)", (SWEEP_VERDICT,)),
    Mutant("sweep-verdict-one-missing-seed-is-no-test-users", VERDICTS, "sweep_entity_verdict",
           "any((_finite(x) for x in s.values()))", "all((_finite(x) for x in s.values()))", (SWEEP_VERDICT,)),
    Mutant("sweep-verdict-inconclusive-counted-better", VERDICTS, "sweep_entity_verdict",
           "tie += 1", "better += 1", (SWEEP_VERDICT,)),
    Mutant("crossing-needs-no-larger-epsilon", "dpfed_core/evaluation/experiments.py", "crossing_report",
           "if not ok(e):\n    break", "if not ok(e):\n    continue",
           (f"{VERDICTT}::test_federation_pays_from_the_smallest_epsilon_beyond_which_every_grid_point_beats_the_baseline",)),
    Mutant("crossing-rmse-gain-not-held-to-the-ranking", EXPERIMENTS, "crossing_report.ok",
           "e['state'] == 'beats' and bool(mm + (sd if np.isfinite(sd) else 0.0) < RANDOM_MAR)",
           "e['state'] == 'beats' and (metric in RMSE_METRICS or bool(mm + (sd if np.isfinite(sd) else 0.0) < RANDOM_MAR))",
           ("tests/test_verdicts.py::test_in_observed_mode_an_rmse_crossing_is_held_to_the_ranking_chance_check",)),
    Mutant("crossing-rmse-called-unstatable-in-observed-mode", EXPERIMENTS, "crossing_report",
           "mode == 'observed' and metric not in RMSE_METRICS and _chance_decides(effects, crossing)",
           "mode == 'observed' and _chance_decides(effects, crossing)",
           ("tests/test_verdicts.py::test_in_observed_mode_an_rmse_crossing_is_held_to_the_ranking_chance_check",)),
    Mutant("crossing-chance-check-without-sd", "dpfed_core/evaluation/experiments.py", "crossing_report.ok",
           "mm + (sd if np.isfinite(sd) else 0.0) < RANDOM_MAR", "mm < RANDOM_MAR",
           (f"{VERDICTT}::test_a_crossing_needs_a_ranking_better_than_chance_by_one_sd",)),
    Mutant("blend-matrix-weight-never-back-to-zero", BLEND, "choose_weights",
           "('m', wm, MATRIX_WEIGHTS)", "('m', wm, MATRIX_WEIGHTS[1:])",
           (f"{BLENDT}::test_the_search_drops_a_part_that_is_best_alone_when_the_others_beat_it_together",)),
    Mutant("blend-item-weight-dropped-at-refit", BLEND, "fit_blend",
           "np.full((n, 1), w)", "np.full((n, 1), 1.0)", (BLEND_WEIGHTS,)),
    Mutant("blend-matrix-weight-dropped-at-refit", BLEND, "fit_blend", "U * w", "U", (BLEND_WEIGHTS,)),
    Mutant("holdout-takes-a-users-only-item", BLEND, "_holdout_positions", "has = cnt >= 2", "has = cnt >= 1",
           (f"{BLENDT}::test_a_user_with_one_item_keeps_it_on_the_holdout",)),
    Mutant("evidence-at-min-users-refused", BLEND, "fit_blend",
           "np.count_nonzero(has_h) < MIN_EVIDENCE_USERS", "np.count_nonzero(has_h) <= MIN_EVIDENCE_USERS",
           (f"{BLENDT}::test_a_holdout_of_min_evidence_users_is_evidence_and_one_fewer_is_not",)),
    Mutant("popularity-sums-values", BLEND, "popularity",
           "np.bincount(X.indices, minlength=X.shape[1])", "np.bincount(X.indices, weights=X.data, minlength=X.shape[1])",
           (f"{BLENDT}::test_the_sites_popularity_counts_its_users_not_their_values",)),
    Mutant("shrunk-popularity-outside-its-support", BLEND, "shrunk_popularity",
           "np.where(_support(g, support), g, 0.0)", "g",
           (f"{BLENDT}::test_the_shrunk_popularity_keeps_the_sites_own_outside_the_support_whatever_g_says_there",)),
    Mutant("shrinkage-nothing-for-a-site-without-the-items", BLEND, "_eb_weight",
           "if p.sum() <= 0:\n    return 1.0", "if p.sum() <= 0:\n    return 0.0",
           (f"{BLENDT}::test_a_site_that_has_none_of_the_federations_items_takes_the_federations_order_on_them",)),
    Mutant("alone-default-rule-ignored", BLEND, "fit_site_model",
           "g is None or default_rule == 'alone'", "g is None",
           (f"{BLENDT}::test_a_small_site_under_the_alone_rule_keeps_its_own_popularity",)),
    Mutant("known-items-from-the-full-rows", BLEND, "fit_site_model.on_known",
           "keep = known_items(Z)", "keep = known_items(X)", (KNOWN_ONLY,)),
    Mutant("federation-factors-not-masked-to-known-items", BLEND, "fit_site_model.federation_part",
           "V_z = on_known(V_fed, Z)", "V_z = V_fed", (KNOWN_ONLY,)),
    Mutant("every-item-known-by-name", "dpfed_core/models/shared_items.py", "known_items",
           "np.bincount(X.indices, minlength=X.shape[1]) > 0", "np.bincount(X.indices, minlength=X.shape[1]) >= 0",
           ("tests/test_site_items.py::test_a_site_maps_released_keys_back_onto_the_item_names_it_holds_only",)),
    # a catalogue of columns keeps the public bound as given: a bound cut to a whole number clips a
    # site's rows on the keys below what its releases are calibrated for
    Mutant("shared-items-fractional-bound-truncated", "dpfed_core/models/shared_items.py", "SharedItems.from_columns",
           "cls(key, int(columns.size), float(value_max), bool(public))", "float(int(value_max))",
           (f"{SITEMS}::test_a_catalogue_of_columns_keeps_a_fractional_value_bound_and_says_whether_it_is_public",),
           arg=2),
    # a catalogue of no columns (a float empty array) fails instead of sharing no item
    Mutant("shared-from-columns-no-int-cast", "dpfed_core/models/shared_items.py", "SharedItems.from_columns",
           "columns = np.asarray(columns, dtype=np.int64)", "columns = np.asarray(columns)",
           (f"{SITEMS}::test_a_catalogue_of_no_columns_shares_no_item",)),
    # the site's blend: a hold-out without users read as a perfect ranking, the search's second pass
    # or its widest item weight lost, empty rows diluting the site's frequencies, the fit memo sharing
    # its arrays or outgrowing its bound, samples drawn (and the site's stream moved) at the caps, the
    # federation-only default without its popularity, features of another item axis used
    Mutant("blend-holdout-mar-empty-is-top", BLEND, "holdout_mar", "if not has.any():\n    return 0.5",
           "if not has.any():\n    return 0.0", (BLEND_NO_HOLDOUT_USERS,)),
    Mutant("blend-holdout-scores-empty-is-top", BLEND, "_HoldoutScores.mar", "if self.n_users == 0:\n    return 0.5",
           "if self.n_users == 0:\n    return 0.0", (BLEND_NO_HOLDOUT_USERS,)),
    Mutant("blend-search-one-pass", BLEND, "choose_weights", "range(2)", "range(1)",
           (f"{BLENDT}::test_the_search_comes_back_to_a_weight_once_the_other_weights_have_moved",)),
    Mutant("blend-item-weights-without-four", BLEND, MODULE, "ITEM_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)",
           "ITEM_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)",
           (f"{BLENDT}::test_the_grid_lets_an_item_part_weigh_sixteen_times_a_matrix_part",)),
    Mutant("blend-frequencies-count-empty-rows", BLEND, "_frequencies", "int(np.count_nonzero(np.diff(X.indptr)))",
           "int(X.shape[0])", (f"{BLENDT}::test_a_sites_users_without_rows_do_not_dilute_its_frequencies",)),
    Mutant("blend-site-fits-kept-uncopied", BLEND, "_SiteFits.remember", "return tuple((a.copy() for a in hit[0]))",
           "return hit[0]", (BLEND_SITE_FITS,)),
    Mutant("blend-site-fits-evict-one", BLEND, "_SiteFits._keep",
           "while self.bytes > self.max_bytes:\n    _, (_, _, s) = self._fits.popitem(last=False)\n    self.bytes -= s",
           "if self.bytes > self.max_bytes:\n    _, (_, _, s) = self._fits.popitem(last=False)\n    self.bytes -= s",
           (BLEND_SITE_FITS,)),
    Mutant("blend-site-fits-oversize-kept", BLEND, "_SiteFits._keep", "size > self.max_bytes or key in self._fits",
           "key in self._fits", (BLEND_SITE_FITS,)),
    Mutant("blend-users-at-cap-sampled", BLEND, "holdout_sample", "users.size > HOLDOUT_USERS",
           "users.size >= HOLDOUT_USERS", (BLEND_SAMPLE_CAPS,)),
    Mutant("blend-items-at-cap-sampled", BLEND, "holdout_sample", "n_items > HOLDOUT_ITEMS", "n_items >= HOLDOUT_ITEMS",
           (BLEND_SAMPLE_CAPS,)),
    Mutant("blend-fed-only-default-without-dp-popularity", BLEND, "fit_site_model",
           "1.0 if name == 'dp popularity' else 0.0", "0.0", (BLEND_FED_ONLY,)),
    Mutant("blend-fed-only-default-with-zero-factors", BLEND, "fit_site_model",
           "V_fed is not None and bool(np.any(V_fed))", "V_fed is not None", (BLEND_FED_ONLY,)),
    Mutant("blend-features-shape-unchecked", BLEND, "fit_site_model", "features is not None and features.shape[0] == m",
           "features is not None", (f"{BLENDT}::test_item_features_on_another_item_axis_are_not_used",)),
    Mutant("blend-no-holdout-first-item-when-no-matrix", BLEND, "fit_blend", "[1.0] + [0.0] * (len(item_parts) - 1)",
           "[0.0] * len(item_parts)",
           (f"{BLENDT}::test_fit_blend_without_holdout_users_returns_the_default_under_the_rule",)),
    # a tie on the hold-out puts the caller's default in place of the site's own blend as the bar
    Mutant("blend-better-on-ties", BLEND, "_better", "score(a) < score(b) - 1e-12", "score(a) <= score(b)",
           (f"{BLENDT}::test_a_blend_is_not_better_than_itself_so_a_tie_keeps_the_sites_own_blend",)),
    # with the one-standard-error rule off, a site without a hold-out user drops the default for its first part
    Mutant("blend-no-holdout-default-without-evidence", BLEND, "fit_blend", "default is not None",
           "evidence > 0 and default is not None", (f"{BLENDT}::test_fit_blend_without_holdout_users_returns_the_default_under_the_rule",),
           nth=0),
    # a site with no rows weighs the federation fully (λ = 1) and yet scores every item zero
    Mutant("blend-empty-site-ignores-federation", BLEND, "shrunk_popularity_parts",
           "lam == 0.0 or g[S].sum() <= 0", "n == 0 or lam == 0.0 or g[S].sum() <= 0",
           (f"{BLENDT}::test_a_site_without_rows_takes_the_federations_popularity_as_its_weight_says",)),
    Mutant("split-quota-rounded-down", SPLIT, "split_users",
           "np.rint(test_fraction * sizes)", "np.floor(test_fraction * sizes)",
           (f"{SPLITT}::test_each_entity_tests_its_fraction_rounded_to_the_nearest_user",)),
    Mutant("split-tests-the-first-users", SPLIT, "split_users",
           "key = rng.random(n)", "key = np.arange(n, dtype=float)",
           (f"{SPLITT}::test_test_users_and_hidden_entries_are_drawn_uniformly",)),
    # a stored zero counted as an entry: a user of too few ratings becomes a test user, and a missing
    # rating is hidden and scored as a test entry
    Mutant("split-stored-zeros-are-entries", SPLIT, "split_users", "X.eliminate_zeros()", "pass",
           (f"{SPLITT}::test_stored_zeros_are_neither_counted_nor_hidden",)),
    # a repeated cell counted twice: a user of too few items is tested, one item hidden "twice"
    Mutant("split-repeated-cells-are-two-entries", SPLIT, "split_users", "X.sum_duplicates()", "pass",
           (f"{SPLITT}::test_a_repeated_cell_counts_as_one_entry_of_its_user",)),
    # a given training matrix kept with its repeated cells: its entry count is wrong
    Mutant("given-split-keeps-repeated-cells", SPLIT, "Split.of", "train.sum_duplicates()", "pass",
           (f"{SPLITT}::test_a_repeated_cell_counts_as_one_entry_of_its_user",)),
    # rows[::2] of the training data reads the contiguous block instead of every other row
    Mutant("training-rows-step-ignored", SPLIT, "TrainRows.__getitem__", "step == 1", "True",
           (f"{SPLITT}::test_training_rows_read_with_a_step_are_every_other_row",)),
    Mutant("sweep-verdict-sample-sd-not-standard-error", VERDICTS, "sweep_entity_verdict",
           "d.std(ddof=1) / math.sqrt(len(d))", "d.std(ddof=1)", (SWEEP_SE,)),
    Mutant("sweep-verdict-population-sd", VERDICTS, "sweep_entity_verdict", "d.std(ddof=1)", "d.std(ddof=0)",
           (SWEEP_SE,)),
    Mutant("paired-effect-beats-within-its-standard-error", EXPERIMENTS, "paired_effects",
           "abs(mean) > sd", "abs(mean) > sd / math.sqrt(g.size)", (PAIRED,)),
    Mutant("paired-effect-with-another-seeds-baseline", EXPERIMENTS, "paired_effects",
           "next(((b, s) for b, s in base if s == r.get('seed')), None)", "next(((b, s) for b, s in base), None)",
           (PAIRED,)),
    Mutant("value-scale-negative-reverses-rankings", BLEND, "value_scale",
           "xs / ss if ss > 0 and xs > 0 else 1.0", "xs / ss if ss > 0 else 1.0",
           (f"{BLENDT}::test_the_value_scale_is_never_negative_so_it_never_turns_a_ranking_around",)),
    Mutant("nested-evidence-bar-ignores-the-default", BLEND, "fit_blend",
           "default is not None and _better(mats, vecs, reduced_h, hidden_h, has_h, cols, default, (full_m, full_i))",
           "False",
           (f"{BLENDT}::test_the_bar_of_nested_evidence_is_the_default_where_it_beats_the_sites_own_blend",)),
    Mutant("own-items-kept-without-a-local-blend", CATRUN, "keeps_own_items",
           "bool(getattr(build_method(config, 1.0), 'local_blend', False))", "True", (OWN_ITEMS_KEPT,)),
    Mutant("declared-note-counts-every-item-as-outside", CATRUN, "declared_catalogue_note",
           "n_items - n_declared", "n_items", (OWN_ITEMS_KEPT,)),
    Mutant("empty-catalogue-site-model-without-the-rule", SUMM, "own_round2",
           "fit_site_model(X, rank=int(method.rank))", "0.0", (EMPTY_IS_LOCAL,), arg="evidence"),
    Mutant("time-hint-at-the-default-test-fraction", "dpfed_core/evaluation/cost.py", "_terms",
           "float(cfg.get('test_fraction', 0.2))", "0.2",
           ("tests/test_cost.py::test_each_cost_term_reads_the_runs_own_test_fraction_iterations_and_k",)),
    Mutant("dashboard-guarantee-states-the-request", UI_TABLES, "guarantee_text",
           "format_epsilon(p['epsilon'])", "format_epsilon(p['requested_epsilon'])", (LEDGER_GUARANTEE,), nth=1),
    Mutant("cli-table-states-the-request", CLI_MAIN, "_print_table",
           "doc['privacy']['epsilon']", "doc['privacy']['requested_epsilon']", (CLI_TABLE,)),
    Mutant("cli-table-states-one-entitys-numbers", CLI_MAIN, "_print_table",
           "doc['overall'][k]", "doc['entities'][0][k]", (CLI_TABLE,)),
    Mutant("cli-sweep-silent-when-inconclusive-against-dp-popularity", CLI_MAIN, "cmd_sweep",
           "row['verdict'] != 'beats dp-popularity'", "row['verdict'] == 'LOSES to dp-popularity'",
           (f"{CLIT}::test_a_sweep_says_when_its_method_does_not_beat_dp_popularity_inconclusive_included",)),
    Mutant("advice-quotes-another-epsilons-setting", UI_DEFAULTS, "chosen_setting",
           "_epsilon(s['epsilon'])", "_epsilon(d['epsilon'])",
           (f"{ADVT}::test_the_advice_quotes_the_measured_setting_at_the_defaults_epsilon",)),
    Mutant("time-hint-counts-one-run", UI_ENGINE, "estimate_line", "n = len(list(configs))", "n = 1",
           ("tests/test_cost.py::test_the_pages_time_hint_counts_every_run_and_adds_their_predictions",)),
    Mutant("crossing-counts-the-baselines-seeds", EXPERIMENTS, "crossing_report",
           "{r.get('seed') for r in sweep_doc.get('runs', []) if r['method'] == method}",
           "{r.get('seed') for r in sweep_doc.get('runs', [])}",
           (f"{VERDICTT}::test_a_crossing_counts_the_seeds_of_the_swept_method_not_of_its_baseline",)),
    Mutant("report-scope-states-the-request", RSECTIONS, "_scope",
           "run.get('privacy', {}).get('epsilon')", "run.get('privacy', {}).get('requested_epsilon')",
           (f"{REPORTT}::test_values_match_the_run",)),
    Mutant("report-parameters-without-the-method-parameters", RSECTIONS, "_parameters", "mparams", "False",
           (f"{REPORTT}::test_the_parameters_state_every_method_parameter_the_run_was_given",), nth=1),
    Mutant("report-epsilon-chart-request-line-at-the-ledgers-epsilon", RSECTIONS, "_privacy",
           "privacy_composed_bars(per_entity, _f(p.get('requested_epsilon')))", "_f(p.get('epsilon'))",
           (f"{REPORTT}::test_values_match_the_run",), arg=1),
    Mutant("verdict-compares-with-an-undefined-baseline", VERDICTS, "entity_verdict",
           "_finite(v) and _finite(base.get(n))", "_finite(v)",
           (f"{VERDICTT}::test_entity_verdict_against_local_and_individual_and_nan_is_no_test_users",)),
    Mutant("run-evaluated-at-the-default-cut-off", EXPERIMENTS, "run_method",
           "evaluate(result.entity_factors(), None)", "10",
           ("tests/test_metrics.py::test_a_run_is_evaluated_in_its_own_mode_at_its_own_cut_off",), arg=8),
    Mutant("run-evaluated-in-zero-mode", EXPERIMENTS, "run_method",
           "evaluate(result.entity_factors(), None)", "'zero'",
           ("tests/test_metrics.py::test_a_run_is_evaluated_in_its_own_mode_at_its_own_cut_off",), arg=7),
    Mutant("non-private-summary-requests-the-configured-epsilon", EXPERIMENTS, "privacy_summary",
           "config.epsilon if uses_epsilon else math.inf", "config.epsilon",
           (f"{LABELS}::test_a_non_dp_method_requests_no_delta_and_is_never_labelled_a_simulation",)),
    Mutant("label-rounds-epsilon-to-two-digits", EXPERIMENTS, "privacy_summary",
           "f'({epsilon_that_holds(eps)}, {dlt:.3g})-DP per user of each entity (user-level, parallel over entities)'",
           "f'({eps:.2g}, {dlt:.3g})-DP per user of each entity (user-level, parallel over entities)'",
           (f"{LABELS}::test_the_label_states_the_ledgers_epsilon_to_four_significant_digits",)),
    Mutant("report-epsilon-chart-from-the-stage-rows", RSECTIONS, "_privacy",
           "privacy_composed_bars(per_entity, _f(p.get('requested_epsilon')))", "p.get('per_stage') or []",
           (f"{REPORTT}::test_epsilon_chart_shows_the_composed_guarantee_not_a_stack_of_stages",), arg=0),
    Mutant("round2-federation-not-limited-to-known-names", SUMM, "blended_round2",
           "bool(public.get(KNOWN_ONLY, False))", "False",
           (f"{SITEMS}::test_a_sites_model_on_a_dp_catalogue_masks_the_federation_to_the_names_it_holds",)),
    Mutant("round2-default-rule-ignored", SUMM, "blended_round2",
           "str(getattr(method, 'round2_default', 'shrunk'))", "'shrunk'",
           (f"{SITEMS}::test_a_sites_model_on_a_dp_catalogue_masks_the_federation_to_the_names_it_holds",)),
    Mutant("report-same-data-by-sizes-only", REPORT_PY, "same_data",
           "all(isinstance(k, str) and k for k in keys) and keys[0][:3] == keys[1][:3]", "False",
           (f"{REPORTT}::test_a_sweep_of_other_data_of_the_same_sizes_is_told_apart_by_the_store_key",)),
    Mutant("report-tradeoff-always-on-mar", REPORT_PY, "build_report",
           "_tradeoff(sweep_doc, metric, include_plotlyjs, public)", "'mar'",
           (f"{REPORTT}::test_the_tradeoff_section_is_the_metric_asked_for",), arg=1),
    # what a run reads of a user's table, list or upload, and the check of a run's configuration
    Mutant("explicit-duplicates-error-ignored-for-counts", LT, "_merge_duplicates", "duplicates == 'error'", "False",
           ("tests/test_cli.py::test_an_explicit_duplicates_rule_is_applied_or_refused_never_ignored",)),
    Mutant("ratings-rule-for-counts-replaced-silently", LT, "_check_options",
           "fixed is not None and duplicates in ('last', 'mean', 'sum') and (duplicates != fixed)", "False",
           ("tests/test_cli.py::test_an_explicit_duplicates_rule_is_applied_or_refused_never_ignored",)),
    Mutant("value-kind-name-case-sensitive", LT, "infer_value_kind",
           "str(value_col).strip().lower()", "str(value_col).strip()",
           (f"{RULES}::test_the_value_kind_is_read_off_the_column_name_whatever_its_case",)),
    Mutant("value-bound-zero-accepted", LT, "_check_options",
           "0 < value_max <= VALUE_MAX_LIMIT", "0 <= value_max <= VALUE_MAX_LIMIT",
           (f"{RULES}::test_a_value_bound_of_zero_is_refused_naming_value_max",)),
    Mutant("implicit-zero-read-as-one", LT, "_values", "(v > 0).astype(np.float64)", "(v >= 0).astype(np.float64)",
           (f"{RULES}::test_an_implicit_zero_is_no_interaction_and_any_positive_value_is_one",)),
    Mutant("only-the-first-excluded-entity-left-out", LT, "_apply_entities",
           "t['e'].isin(excl)", "t['e'].isin(excl[:1])", (EXCLUDED,)),
    Mutant("excluded-entities-keep-their-spaces", LT, "_apply_entities",
           "[id_text(str(e)) for e in exclude_entities]", "[str(e) for e in exclude_entities]", (EXCLUDED,)),
    Mutant("strict-entity-list-drops-undeclared-rows", LT, "_apply_entities", "undeclared == 'error'", "False",
           ("tests/test_intake_federation.py::test_a_strict_declared_list_refuses_rows_of_other_entities_by_name",)),
    Mutant("catalogue-drop-share-rounds-to-zero", LT, "_share",
           "'< 1 %' if 0 < pct < 1 else f'{pct:.0f} %'", "f'{pct:.0f} %'",
           ("tests/test_intake_rules.py::test_a_share_under_one_percent_is_not_rounded_to_zero",)),
    Mutant("catalogue-mix-up-hint-for-a-plain-list", LT, "_apply_catalogue",
           "names is not None and list(names) != list(ids)", "True",
           ("tests/test_intake_rules.py::test_a_catalogue_that_names_no_item_of_the_data_shows_both_sides_and_the_likely_mix_up",)),
    Mutant("movie-missing-from-the-movie-file-dropped", LT, "_apply_catalogue", "known.sum() == 0", "True",
           (f"{RULES}::test_a_movielens_rating_of_a_movie_missing_from_its_movie_file_is_kept_as_its_entitys_own",)),
    Mutant("numeric-ids-in-text-order", LT, "_natural_order",
           "np.lexsort((u.to_numpy(), num.to_numpy()))", "np.argsort(u.to_numpy(), kind='stable')",
           (f"{RULES}::test_numeric_ids_are_in_numeric_order",)),
    Mutant("item-name-last-seen", LT, "_assemble",
           "pd.Series(t['name'].astype(str).to_numpy()).groupby(icode).first()",
           "pd.Series(t['name'].astype(str).to_numpy()).groupby(icode).last()",
           (f"{RULES}::test_an_items_readable_name_is_the_first_seen_for_it",)),
    Mutant("value-column-may-be-the-user-column", LT, "_check_distinct_columns",
           "str(col) in seen", "str(col) in seen and param != 'value_col'",
           (f"{RULES}::test_the_value_column_cannot_also_be_the_user_column",)),
    Mutant("repeated-header-joined-to-user-attributes", LT, "_with_user_attributes",
           "_skip_repeated_headers(df, label, from_text, own, notes)", "df",
           ("tests/test_upload.py::test_a_header_repeated_inside_a_table_joined_to_user_attributes_is_skipped_as_"
            "without_them",)),
    Mutant("true-false-words-refused-as-no-number", LT, "_true_false", "word.all()", "False",
           ("tests/test_intake_odd_inputs.py::test_true_false_words_in_a_text_value_column_read_as_a_parquet_boolean_"
            "column_does",)),
    Mutant("numbers-mixed-with-true-false-words-said-as-any-bad-value", LT, "_true_false",
           "word.any() and (word | ~bad).all()", "False",
           ("tests/test_intake_odd_inputs.py::test_a_value_column_mixing_numbers_and_true_false_words_is_refused_"
            "naming_the_row",)),
    Mutant("list-headed-by-its-column-read-as-a-name", INP, "parse_list",
           "column is not None and _same_word(lines[0], column)", "False",
           (f"{RULES}::test_a_lists_first_line_naming_the_column_the_list_is_for_is_its_header",)),
    Mutant("lone-name-like-word-read-as-header", INP, "parse_list",
           "_is_lone_header(lines[0])", "_is_header_field(lines[0])",
           (f"{RULES}::test_a_lone_word_that_may_be_a_name_is_a_name_not_a_header",)),
    Mutant("empty-csv-name-kept-empty", INP, "parse_list",
           "r[1].strip() if len(r) > 1 and r[1].strip() else r[0].strip()",
           "r[1].strip() if len(r) > 1 else r[0].strip()",
           (f"{RULES}::test_a_csv_list_line_without_a_name_is_named_by_its_id",)),
    Mutant("declared-csv-first-row-header-on-one-word", INP, "parse_list",
           "all((_is_header_field(x) for x in rows[0]))", "any((_is_header_field(x) for x in rows[0]))",
           (f"{RULES}::test_a_declared_csv_list_keeps_a_first_row_with_one_header_like_field",)),
    Mutant("list-with-a-stray-byte-read-as-latin1", INP, "detect_encoding",
           r"not re.search(rb'[\xc2-\xf4][\x80-\xbf]', raw)", "True",
           (f"{RULES}::test_a_utf8_list_with_one_stray_byte_asks_for_its_encoding",)),
    Mutant("a-column-named-like-a-placeholder-hidden-from-the-mapper", TABLES, "read_table",
           "not names[int(m.group(1))].strip()", "True",
           ("tests/test_intake_odd_inputs.py::test_a_column_the_header_leaves_blank_is_not_offered_by_the_mapper_and_said",)),
    # entity rows that do not tile the users: a user scored with another entity's own columns
    Mutant("entity-rows-out-of-order-accepted", EFAC, "EntityFactors.__init__",
           "any((sl.start != end for (sl, end) in zip(self.slices, ends)))", "False",
           ("tests/test_entity_factors.py::test_entity_rows_out_of_order_overlapping_or_leaving_users_out_are_refused",)),
    Mutant("entity-rows-ending-before-the-last-user-accepted", EFAC, "EntityFactors.__init__",
           "ends[-1] != n", "False",
           ("tests/test_entity_factors.py::test_entity_rows_out_of_order_overlapping_or_leaving_users_out_are_refused",)),
    # the plug-ins a process imports, and passes on to the processes it starts
    Mutant("plug-ins-listed-twice", "dpfed_core/deployment/plugins.py", "listed",
           "list(dict.fromkeys([*names, *(str(e).strip() for e in extra if str(e).strip())]))",
           "[*names, *(str(e).strip() for e in extra if str(e).strip())]", (PLUGINS_LISTED,)),
    Mutant("plug-ins-of-the-flags-before-the-environments", "dpfed_core/deployment/plugins.py", "listed",
           "[*names, *(str(e).strip() for e in extra if str(e).strip())]",
           "[*(str(e).strip() for e in extra if str(e).strip()), *names]", (PLUGINS_LISTED,)),
    Mutant("plug-in-blank-name-kept", "dpfed_core/deployment/plugins.py", "listed",
           "[n.strip() for n in os.environ.get(ENV, '').split(',') if n.strip()]",
           "[n.strip() for n in os.environ.get(ENV, '').split(',')]", (PLUGINS_LISTED,)),
    Mutant("plug-ins-not-passed-to-the-processes-started", "dpfed_core/deployment/plugins.py", "load_plugins",
           "os.environ[ENV] = ','.join(names)", "pass", (PLUGINS_LISTED,)),
    # the message log a compliance officer reads
    Mutant("message-bytes-counted-as-values", "dpfed_core/federation/messages.py", "array_message", "int(arr.nbytes)",
           "int(arr.size)", (MESSAGE_SIZE,)),
    Mutant("message-shape-transposed", "dpfed_core/federation/messages.py", "array_message",
           "tuple((int(s) for s in arr.shape))", "tuple((int(s) for s in arr.shape[::-1]))", (MESSAGE_SIZE,)),
    # a limit set below 1 MiB is refused as "more than 0 MiB"
    Mutant("upload-limit-below-a-mib-said-as-zero", TABLES, "_size", "n_bytes >= 2 ** 20", "True",
           ("tests/test_upload_bounds.py::test_a_limit_below_one_mib_is_named_in_the_size_it_was_set_to",)),
    # a summable run asked to weight prototypes it never sends runs and states the setting in its result
    Mutant("summable-run-weighting-prototypes-accepted", PROTO, "check_counts", "is_summable(method.name)", "False",
           ("tests/test_protocol.py::test_a_summable_release_asked_to_weight_prototypes_is_refused_before_any_share",)),
    Mutant("summable-fit-weighting-prototypes-accepted", PROTO, "_fit_summable",
           "check_counts(method, config.server_weighting)", "None",
           ("tests/test_protocol.py::test_a_summable_release_asked_to_weight_prototypes_is_refused_before_any_share",)),
    # a prototype run weighting by counts fails on its first summable reference (dp-popularity by default)
    Mutant("compared-summable-keeps-the-runs-weighting", EXPERIMENTS, "unused_settings_dropped",
           "not get_method(config.method).uses_k and config.server_weighting != 'none'", "False",
           ("tests/test_protocol.py::test_a_summable_release_asked_to_weight_prototypes_is_refused_before_any_share",)),
    Mutant("report-states-a-weighting-of-prototypes-never-sent", RSECTIONS, "_parameters",
           "cfg.pop('server_weighting', None)", "None",
           ("tests/test_report.py::test_parameters_omit_k_for_a_method_that_takes_none_and_the_default_k_is_not_read_off_"
            "the_data",)),
    Mutant("summable-weighting-refused-only-after-the-budget-is-charged", SERVICE, "_check_method",
           "check_counts(method, config.server_weighting)", "None",
           ("tests/test_protocol.py::test_a_summable_release_asked_to_weight_prototypes_is_refused_before_any_share",)),
    Mutant("cr-cr-lf-read-as-two-line-ends", TABLES, "read_table", "b'\\r\\r\\n' in text_head", "False",
           ("tests/test_intake_odd_inputs.py::test_rows_ending_in_cr_cr_lf_are_one_line_each_in_the_rows_and_lines_an_"
            "error_names",)),
    Mutant("a-blank-header-cell-offered-by-the-mapper", "dpfed_core/ui/upload.py", "mappable_columns",
           "[c for c in cols if c not in blank]", "cols",
           ("tests/test_intake_odd_inputs.py::test_a_column_the_header_leaves_blank_is_not_offered_by_the_mapper_and_said",)),
    Mutant("extra-value-read-as-a-trailing-separator", TABLES, "_aligned", "frame.iloc[:, -1].isna().all()", "True",
           ("tests/test_intake_odd_inputs.py::test_data_lines_with_one_field_more_than_the_header_are_refused_not_"
            "read_shifted",)),
    Mutant("trailing-separator-refused", TABLES, "_aligned", "n and frame.iloc[:, -1].isna().all()", "False",
           ("tests/test_intake_odd_inputs.py::test_a_separator_ending_every_data_line_reads_the_table_as_written",)),
    Mutant("text-file-ids-keep-their-spaces", TABLES, "_as_id_strings",
           "_cat_map(s, lambda c: c.str.strip())", "_cat_map(s, lambda c: c)",
           (f"{RULES}::test_ids_of_a_text_file_lose_only_their_outer_spaces",)),
    Mutant("field-of-spaces-not-missing", TABLES, "_is_missing",
           "values.astype(str).str.strip()", "values.astype(str)",
           (f"{RULES}::test_a_field_of_spaces_is_empty_and_named_with_the_flag_that_skips_it",)),
    Mutant("parquet-float-ids-keep-their-dot-zero", TABLES, "_as_id_strings",
           "vals == np.round(vals)", "np.zeros(vals.shape, bool)",
           (f"{RULES}::test_whole_number_ids_of_a_parquet_float_column_match_the_declared_list",)),
    Mutant("header-with-one-number-read-as-data", TABLES, "headerless",
           "max(2, (len(cols) + 1) // 2)", "max(1, (len(cols) + 1) // 2)",
           (f"{RULES}::test_a_two_column_header_with_one_number_is_a_header",)),
    Mutant("attribute-ids-keep-their-spaces", UPLOAD, "join_user_attributes",
           "attributes[attr_user_col].astype(str).map(id_text)", "attributes[attr_user_col].astype(str)",
           (f"{RULES}::test_attribute_ids_are_matched_without_their_outer_spaces",)),
    Mutant("wide-table-item-column-guessed", UPLOAD, "guess_mapping", "set(wide_item_columns(cols))", "set()",
           ("tests/test_upload.py::test_numbered_columns_of_one_stem_are_a_wide_table_and_never_the_item_guess",)),
    Mutant("item-name-may-be-the-entity-column", UPLOAD, "mapping_problems",
           "name in (user, entity)", "name in (user,)",
           (f"{RULES}::test_the_item_name_column_cannot_be_the_entity_column",)),
    # the first column containing a role's word wins over the one named exactly like it: user_name
    # proposed as the user id
    Mutant("role-guess-ignores-an-exact-name", UPLOAD, "guess_column", "lc == h", "False",
           ("tests/test_upload.py::test_a_column_named_exactly_like_a_role_is_preferred_to_one_that_only_contains_it",)),
    # a u.user with a letter ZIP code in its first row loses that user (read as the header)
    Mutant("known-header-less-file-read-with-a-header", UPLOAD, "read_upload",
           "known_format(filename, df.shape[1]) is None", "True",
           ("tests/test_upload.py::test_a_known_header_less_file_keeps_its_first_line_even_when_it_reads_like_a_header",)),
    # a gzipped u.data is not recognised: its columns become column 1 … and its guesses are lost
    Mutant("gzipped-known-file-not-recognised", TABLES, "known_format", "name[:-3]", "name",
           ("tests/test_upload.py::test_a_gzipped_known_file_is_its_format",)),
    # a header of five names with two years in it is read as a data row: its names become a user
    Mutant("header-with-two-numbers-of-five-read-as-data", TABLES, "headerless",
           "max(2, (len(cols) + 1) // 2)", "max(2, len(cols) // 2)",
           ("tests/test_upload.py::test_a_header_with_fewer_than_half_numbers_is_a_header",)),
    Mutant("table-file-needs-only-one-id-column", "dpfed_core/data/loaders.py", "load_data",
           "'user_col' not in opts or 'item_col' not in opts", "'user_col' not in opts and 'item_col' not in opts",
           (f"{RULES}::test_a_table_file_without_its_item_column_asks_for_the_columns",)),
    # reading an upload for the column mapper: what the Data page proposes for each role and says of a
    # wrong mapping. A header-less table's third column of words (hospital names) proposed as the value
    Mutant("header-less-text-column-proposed-as-the-value", UPLOAD, "_numbers",
           "len(vals) == 0 or np.isnan(vals).any()", "len(vals) == 0", (HEADERLESS_TEXT,)),
    Mutant("header-less-third-column-proposed-as-the-value-unread", UPLOAD, "_guess_by_position",
           "usable and _numbers(df[usable[0]]) is not None", "usable", (HEADERLESS_TEXT,)),
    # a header-less table's fourth column (the site) left for the user to find
    Mutant("header-less-fourth-column-never-the-entity", UPLOAD, "_guess_by_position",
           "if usable:\n    out['entity'] = usable.pop(0)", "pass", (HEADERLESS_TEXT,)),
    # one rating written 'nan' (numpy's savetxt) and the rating column is proposed as the entity
    Mutant("a-nan-rating-makes-the-column-no-value", UPLOAD, "_numbers",
           "text[(text != '') & (text.str.lower() != 'nan')]", "text",
           ("tests/test_upload.py::test_a_rating_written_nan_is_a_missing_rating_and_the_column_still_the_value",)),
    # one nine-digit user id makes the user column a timestamp: the item is proposed as the user
    Mutant("one-large-id-makes-a-column-a-timestamp", UPLOAD, "is_timestamp_column",
           "bool(np.all(v >= TIMESTAMP_MIN))", "bool(np.any(v >= TIMESTAMP_MIN))", (WHOLE_UNIX_TIMES,)),
    # large amounts with cents read as Unix times and never proposed as the value
    Mutant("fractional-large-values-read-as-timestamps", UPLOAD, "is_timestamp_column",
           "bool(np.all(v == np.round(v)))", "True", (WHOLE_UNIX_TIMES,)),
    # a u.data whose times are small has its timestamp column proposed as the entity
    Mutant("u-data-timestamp-column-proposed-as-the-entity", UPLOAD, "guess_mapping",
           "list(map(str, columns))[:3] == KNOWN_FORMATS['u.data'][1][:3]", "False",
           ("tests/test_upload.py::test_a_u_data_file_never_proposes_its_fourth_column_whatever_it_holds",)),
    Mutant("wide-table-of-three-columns-listed-not-spanned", UPLOAD, "wide_table_text", "len(wide) > 2",
           "len(wide) > 3",
           ("tests/test_upload.py::test_a_wide_table_of_three_numbered_columns_is_named_first_to_last_with_its_count",)),
    # Item1, item2, ITEM3 not seen as one wide table: one of them may be proposed as the item
    Mutant("wide-table-stems-compared-case-sensitively", UPLOAD, "wide_item_columns", "m.group(1).strip().lower()",
           "m.group(1).strip()",
           ("tests/test_upload.py::test_numbered_columns_written_in_mixed_case_are_one_wide_table",)),
    # a two-column long table is told what a user-attribute table needs
    Mutant("long-table-of-two-columns-told-the-attribute-tables-need", UPLOAD, "upload_columns", "min_columns >= 3",
           "min_columns > 3", ("tests/test_upload.py::test_too_few_columns_are_refused_with_what_that_upload_needs_and_"
                               "the_separator_to_check",)),
    # hospital_code, drug_name, dose_count proposed for nothing
    Mutant("role-word-inside-a-column-name-not-matched", UPLOAD, "guess_column", "h in lc", "lc in h",
           ("tests/test_upload.py::test_a_column_whose_name_contains_a_roles_word_is_proposed_for_it",)),
    Mutant("zip-column-not-proposed-as-the-entity", UPLOAD, "guess_mapping",
           "pick('entity', 'hospitalid', 'hospital', 'region', 'bank', 'site', 'zip', 'clinic', optional=True)",
           "pick('entity', 'hospitalid', 'hospital', 'region', 'bank', 'site', 'clinic', optional=True)",
           ("tests/test_upload.py::test_each_entity_word_names_the_entity_column",)),
    # an event log's title column proposed as its value; a notes column proposed as the item
    Mutant("first-free-column-proposed-as-the-value", UPLOAD, "guess_mapping",
           "pick('value', 'rating', 'count', 'score', 'amount', optional=True)",
           "pick('value', 'rating', 'count', 'score', 'amount')", (BY_NAME_ONLY,)),
    Mutant("first-free-column-proposed-as-the-item", UPLOAD, "guess_mapping",
           "pick('item', 'item_id', 'itemid', 'movie', 'product', 'drugname', 'drug', 'medication', 'code', "
           "optional=True)",
           "pick('item', 'item_id', 'itemid', 'movie', 'product', 'drugname', 'drug', 'medication', 'code')",
           (BY_NAME_ONLY,)),
    Mutant("item-name-may-be-the-user-column", UPLOAD, "mapping_problems", "name in (user, entity)",
           "name in (entity,)", (VALUE_NAME_ROLES,)),
    Mutant("value-may-be-the-item-column", UPLOAD, "mapping_problems", "value in (user, item, entity)",
           "value in (user, entity)", (VALUE_NAME_ROLES,)),
    # an attribute table without a user-id name joined on its last column (the ZIP code)
    Mutant("attribute-user-falls-back-to-the-last-column", UPLOAD, "guess_attribute_user",
           "guess_column(cols, 'user', 'user_id', 'userid', 'patientunitstayid', 'patient', 'id') or cols[0]",
           "guess_column(cols, 'user', 'user_id', 'userid', 'patientunitstayid', 'patient', 'id') or cols[-1]",
           ("tests/test_upload.py::test_an_attribute_table_without_a_user_id_name_is_joined_on_its_first_column",)),
    Mutant("repeated-attribute-ids-counted-per-extra-row", UPLOAD, "join_user_attributes", "dup.nunique()",
           "len(dup)", ("tests/test_upload.py::test_a_user_id_repeated_three_times_in_the_attribute_table_is_one_"
                        "repeated_id",)),
    # a user column missing from the interactions is a KeyError, not a message naming it
    Mutant("join-on-a-missing-user-column-unnamed", UPLOAD, "join_user_attributes",
           "user_col not in interactions.columns", "False",
           ("tests/test_upload.py::test_a_user_column_missing_from_the_interactions_is_named",)),
    # 'Zoë' with a combining diaeresis in the interactions has no attribute row: the join refuses the upload
    Mutant("join-user-ids-compared-as-written", UPLOAD, "join_user_attributes", "ids.map(id_text).to_numpy(object)",
           "ids.to_numpy(object)",
           ("tests/test_upload.py::test_user_ids_are_joined_as_they_display_whatever_their_unicode_form",)),
    Mutant("entity-may-be-the-user-column", UPLOAD, "mapping_problems", "entity == user", "False", (ENTITY_ROLES,)),
    Mutant("entity-may-be-the-item-column", UPLOAD, "mapping_problems", "entity == item", "False", (ENTITY_ROLES,)),
    Mutant("bound-rule-rounds-the-declared-maximum", UPLOAD, "bound_rule_text", "value_max", "round(value_max)",
           ("tests/test_upload.py::test_the_bound_rule_states_the_declared_maximum_as_given",), nth=0),
    # reading a table: the limits of an upload and of a file, ids, and what a refusal names
    # an upload up to twice the byte limit read whole
    Mutant("upload-past-the-byte-limit-read", TABLES, "check_upload_size", "size > limit", "size > limit * 2",
           (f"{UPLOAD_BOUNDS}::test_an_upload_one_byte_past_the_byte_limit_is_refused_plain_or_gzipped_and_one_at_it_is_"
            "read",), nth=0),
    Mutant("upload-limit-in-megabytes-not-mebibytes", TABLES, "upload_limits", "int(mb * 2 ** 20)",
           "int(mb * 10 ** 6)", (f"{UPLOAD_BOUNDS}::test_the_upload_limit_is_counted_in_mebibytes",)),
    # ids up to twice the id-character limit copied at the longest one's width
    Mutant("ids-past-the-character-limit-copied", TABLES, "check_id_sizes", "len(cats) * longest <= limit",
           "len(cats) * longest <= 2 * limit",
           (f"{UPLOAD_BOUNDS}::test_ids_at_the_id_character_limit_load_and_one_character_more_is_refused",)),
    Mutant("table-file-past-the-largest-size-read", TABLES, "read_table", "size > MAX_TABLE_BYTES", "False",
           (f"{UPLOAD_BOUNDS}::test_a_table_file_past_the_largest_size_is_refused_before_it_is_read",)),
    # ' u1' and 'u1' of a DataFrame (an upload joined in memory) two users
    Mutant("dataframe-ids-keep-their-spaces", TABLES, "_as_id_strings",
           "s.astype(str).str.strip().astype('category')", "s.astype(str).astype('category')",
           (f"{RULES}::test_ids_of_a_dataframe_lose_only_their_outer_spaces",)),
    # a missing row given the answer of the first value (a missing value read as a true/false word)
    Mutant("missing-row-gets-another-values-answer", TABLES, "per_value", "rows[codes < 0] = missing", "pass",
           (f"{RULES}::test_a_missing_row_gets_the_missing_mark_never_another_values_answer",)),
    # a missing column's error without the option that names it: the front end cannot say which control
    Mutant("missing-column-error-without-its-option", TABLES, "_check_columns", "(params or {}).get(missing[0][0])",
           "None", (f"{RULES}::test_a_missing_column_is_named_with_the_option_that_names_it",)),
    # the encoding decided on the first 4 MiB: UTF-8 accents after them garbled as Windows-1252, no error
    Mutant("encoding-decided-on-the-first-block", TABLES, "_whole_file_encoding", "multibyte and bad_at is not None",
           "True", (f"{RULES}::test_the_encoding_is_decided_on_the_whole_file_not_on_its_first_block",)),
    # a NUL byte after the first 64 KiB read into an id
    Mutant("nul-byte-past-the-head-read", TABLES, "read_table", "nul_at is not None", "False",
           (f"{LOADERT}::test_a_nul_byte_past_the_first_64_kib_is_refused_with_its_offset",)),
    Mutant("file-object-left-at-its-end", TABLES, "_source_bytes", "source.seek(pos)", "pass",
           (f"{LOADERT}::test_a_file_object_is_read_and_left_where_it_was",)),
    # the one entry point: a MovieLens 1M directory (ratings.dat) taken for neither MovieLens nor eICU
    Mutant("movielens-1m-directory-not-recognised", LOADERS, "load_data",
           "(p / 'u.data').is_file() or (p / 'ratings.dat').is_file()", "(p / 'u.data').is_file()", (PUBLIC_LISTS,)),
    # the dashboard's entities_from_data refused for a sample or MovieLens, whose entity lists are public
    Mutant("sample-refuses-entities-from-data", LOADERS, "load_data", "opts.pop('entities_from_data', None)", "None",
           (PUBLIC_LISTS,), nth=0),
    Mutant("movielens-refuses-entities-from-data", LOADERS, "load_data", "opts.pop('entities_from_data', None)",
           "None", (PUBLIC_LISTS,), nth=1),
    # ' Sample:Clinic ' or 'Movielens:1M' read as a path; a cached release refused for its cache_dir
    Mutant("data-spec-spaces-kept", LOADERS, "load_data", "str(spec).strip()", "str(spec)", (PUBLIC_LISTS,)),
    Mutant("data-spec-case-sensitive", LOADERS, "load_data", "low = s.lower()", "low = s", (PUBLIC_LISTS,), nth=0),
    Mutant("sample-name-case-sensitive", LOADERS, "load_data", "load_sample(low, **opts)", "load_sample(s, **opts)",
           (PUBLIC_LISTS,)),
    Mutant("movielens-cache-dir-refused", LOADERS, "load_data", "opts.pop('cache_dir', None)", "opts.get('cache_dir')",
           (PUBLIC_LISTS,)),
    # synthetic data drawn afresh each time without a seed; the paper's preset ignored; a typo a TypeError
    Mutant("synthetic-data-unseeded-by-default", LOADERS, "load_data", "opts.pop('seed', 0)", "opts.pop('seed', None)",
           (SYNTHETIC_SPEC,)),
    Mutant("synthetic-paper-preset-ignored", LOADERS, "load_data",
           "synthetic.PAPER if low == 'synthetic:paper' else {}", "{}", (SYNTHETIC_SPEC,)),
    Mutant("synthetic-option-typo-a-type-error", LOADERS, "load_data", "ConfigError(f'synthetic data: {exc}')", "exc",
           (SYNTHETIC_SPEC,)),
    Mutant("removed-option-refused-without-why", LOADERS, "load_data", "_reject_removed(opts)", "None",
           (f"{LOADERT}::test_a_removed_option_says_why_it_went_for_every_source",)),
    Mutant("epsilon-below-the-minimum-accepted", CONFIG, "check_epsilon",
           "0 < eps < MIN_EPSILON", "0 < eps < MIN_EPSILON / 10", (EPS_LIMITS,)),
    Mutant("largest-epsilon-refused", CONFIG, "check_epsilon", "eps > MAX_EPSILON", "eps >= MAX_EPSILON", (EPS_LIMITS,)),
    Mutant("zero-prototypes-accepted", CONFIG, "RunConfig.validate", "v < 1", "v < 0", (OUT_OF_RANGE,)),
    Mutant("largest-ridge-penalty-refused", CONFIG, "RunConfig.validate",
           "self.lam > MAX_LAM", "self.lam >= MAX_LAM", (RIDGE,)),
    Mutant("zero-ridge-penalty-refused", CONFIG, "RunConfig.validate", "self.lam < 0", "self.lam <= 0", (RIDGE,)),
    Mutant("largest-seed-refused", CONFIG, "RunConfig.validate",
           "0 <= self.seed <= MAX_SEED", "0 <= self.seed < MAX_SEED", (SEED,)),
    Mutant("seed-error-names-k", CONFIG, "RunConfig.validate",
           "ConfigError(f'seed must be a whole number from 0 to 2^63 − 1, got {self.seed!r}', param='seed')",
           "'k'", (SEED,), arg="param"),
    Mutant("boolean-dropouts-accepted", CONFIG, "RunConfig.validate",
           "isinstance(self.max_dropouts, bool)", "False", (OUT_OF_RANGE,)),
    Mutant("test-fraction-one-accepted", CONFIG, "RunConfig.validate",
           "0 < self.test_fraction < 1", "0 < self.test_fraction <= 1", (OUT_OF_RANGE,)),
    # the privacy ledger, the budget store, budget planning, the planner and the audit's statistics
    Mutant("basic-delta-max-not-sum", LEDGER, "compose",
           "min(sum(r.delta for r in rows), 1.0)", "min(max((r.delta for r in rows), default=0.0), 1.0)",
           (BASIC_DELTA,)),
    Mutant("zcdp-taken-even-when-looser", LEDGER, "compose", "eps_z < eps_b", "True", (ZCDP_CHOICE,)),
    Mutant("zcdp-drops-the-other-rows-epsilon", LEDGER, "compose", "sum(r.epsilon for r in other)", "0.0",
           (ZCDP_CHOICE,)),
    Mutant("basic-labelled-zcdp", LEDGER, "compose", "best = (eps_b, dlt_b, BASIC)", "best = (eps_b, dlt_b, ZCDP)",
           (ACCOUNTANT_OF,)),
    Mutant("delta-refusal-checks-the-row-only", LEDGER, "PrivacyLedger.spend",
           "delta_h > self.delta * (1 + _REL_TOL) + 1e-300", "delta > self.delta * (1 + _REL_TOL) + 1e-300",
           (f"{LEDGERT}::test_a_spend_is_refused_when_the_entitys_composed_delta_would_pass_the_budget",)),
    Mutant("negative-delta-accepted", LEDGER, "PrivacyLedger.spend", "delta < 0", "False", (NEGATIVE_SPEND,)),
    Mutant("negative-rho-accepted", LEDGER, "PrivacyLedger.spend", "rho < 0", "rho < -1", (NEGATIVE_SPEND,)),
    Mutant("accountant-of-the-least-spent-entity", LEDGER, "PrivacyLedger.accountant", "max(per)", "min(per)",
           (ACCOUNTANT_OF,)),
    Mutant("per-entity-composes-every-entitys-rows", LEDGER, "PrivacyLedger.per_entity",
           "self._rows_of(e)", "self.rows", (ENTITY_SUMS,)),
    Mutant("per-stage-delta-overwritten", LEDGER, "PrivacyLedger.per_stage", "a[1] += r.delta", "a[1] = r.delta",
           (ENTITY_SUMS,)),
    Mutant("per-stage-epsilon-max-not-sum", LEDGER, "PrivacyLedger.per_stage",
           "a[0] += r.epsilon", "a[0] = max(a[0], r.epsilon)", (ENTITY_SUMS,)),
    Mutant("remaining-delta-ignores-the-spend", LEDGER, "EntityLedger.remaining",
           "self.ledger.delta - dlt", "self.ledger.delta", (ENTITY_SUMS,)),
    Mutant("delta-warning-at-one-over-n-squared", LEDGER, "delta_warning",
           "delta > 1.0 / n_hat", "delta > 1.0 / (n_hat * n_hat)",
           (f"{LEDGERT}::test_the_delta_warning_fires_exactly_above_one_over_the_smallest_released_size",)),
    Mutant("store-synchronous-normal", STORE, "Store._connect",
           "con.execute('PRAGMA synchronous = FULL')", "con.execute('PRAGMA synchronous = NORMAL')", (STORE_WRITE,)),
    Mutant("unrecognised-entity-of-a-reexport-gets-a-fresh-account", ODO, "BudgetOdometer._alias_map",
           "sorted({*map(str, account), str(e)})", "[str(e)]",
           (f"{ODOT}::test_an_entity_of_a_reexport_whose_people_are_not_recognised_is_charged_to_every_entity_of_"
            "the_account",)),
    Mutant("store-foreign-keys-off", STORE, "Store._connect",
           "con.execute('PRAGMA foreign_keys = ON')", "con.execute('PRAGMA foreign_keys = OFF')", (STORE_WRITE,)),
    Mutant("store-failed-write-committed", STORE, "Store.write",
           "con.execute('ROLLBACK')", "con.execute('COMMIT')",
           (f"{ODOT}::test_a_write_that_fails_midway_leaves_nothing_behind",)),
    Mutant("store-one-schema-ahead-accepted", STORE, "Store._version_of",
           "version > SCHEMA_VERSION", "version > SCHEMA_VERSION + 1",
           (f"{ODOT}::test_a_store_one_schema_ahead_is_refused",)),
    Mutant("non-private-plan-keeps-delta", BUDGET, "_plan",
           "delta if math.isfinite(eps) else 0.0", "delta",
           (f"{ODOT}::test_every_planned_release_states_its_kind_delta_rho_and_batch",)),
    Mutant("policy-for-another-site-accepted", SITE, "accept", "policy.site and policy.site != shard.entity",
           "False", (f"{SITET}::test_a_policy_written_for_one_site_refuses_at_another_and_charges_nothing",)),
    Mutant("policy-misspelling-not-pointed-at", SITE, "check",
           "difflib.get_close_matches(req.method, list(policy.methods), 1)", "[]",
           (f"{SITET}::test_a_misspelt_method_in_a_policy_is_named_by_the_refusal_of_the_method_meant",)),
    Mutant("deploy-local-starts-a-run-every-site-refuses", DEPLOYED, "check_site_policy",
           "check(policy, request)", "None",
           ("tests/test_deployment_apps.py::test_a_run_every_local_site_would_refuse_is_one_error_naming_the_flag_"
            "before_anything_starts",)),
    Mutant("deploy-local-checks-the-row-bound-at-the-largest-catalogue", DEPLOYED, "check_site_policy",
           "request_of(config, dataset.n_entities, float(dataset.value_max))", "None", (PRECHECK_DERIVED,),
           arg="n_items"),
    Mutant("plan-below-what-the-run-settles", BUDGET, "planned_rho",
           "zcdp_rho_for_epsilon(float(epsilon), float(delta))", "0.99 * zcdp_rho_for_epsilon(float(epsilon), float(delta))",
           (PLANNED_RHO,)),
    Mutant("plan-looser-than-what-the-run-settles", BUDGET, "planned_rho",
           "zcdp_rho_for_epsilon(float(epsilon), float(delta))", "1.1 * zcdp_rho_for_epsilon(float(epsilon), float(delta))",
           (PLANNED_RHO,)),
    Mutant("accountant-record-of-the-least-spent-entity", BUDGET, "most_spent",
           "max(balances, key=lambda b: b.spent_epsilon)", "min(balances, key=lambda b: b.spent_epsilon)",
           (f"{ODOT}::test_the_accountant_record_reports_the_most_spent_entity", BUDGET_COMMANDS)),
    Mutant("every-entity-alike-whatever-they-spent", BUDGET, "most_spent",
           "all(b.spent_epsilon == top.spent_epsilon for b in balances)", "True",
           (f"{ODOT}::test_the_accountant_record_reports_the_most_spent_entity", BUDGET_COMMANDS)),
    Mutant("one-entity-read-as-every-entity", BUDGET, "most_spent",
           "len(balances) > 1 and all(b.spent_epsilon == top.spent_epsilon for b in balances)",
           "all(b.spent_epsilon == top.spent_epsilon for b in balances)",
           (f"{ODOT}::test_the_accountant_record_reports_the_most_spent_entity",)),
    Mutant("planner-one-lucky-epsilon-counts", PLANNER, "epsilon_for_utility", "break", "continue",
           (f"{PLANT}::test_the_target_must_hold_from_the_answer_on_and_one_lucky_point_does_not_count",)),
    Mutant("planner-reference-at-finite-epsilon", PLANNER, "epsilon_for_utility",
           "np.isinf(table['epsilon'])", "~ORIG",
           (f"{PLANT}::test_without_central_the_reference_is_the_swept_method_at_infinite_epsilon",)),
    Mutant("planner-advantage-sign-ignored", PLANNER, "users_needed",
           "adv.append(d if metric in LOWER_IS_BETTER else -d)", "adv.append(d)", (USERS_NEEDED,)),
    Mutant("planner-density-over-entities", PLANNER, "users_needed",
           "max(int(n_items), 1)", "max(int(n_entities), 1)", (USERS_NEEDED,)),
    Mutant("planner-population-sd", PLANNER, "users_needed", "np.std(adv, ddof=1)", "np.std(adv, ddof=0)",
           (USERS_NEEDED,)),
    Mutant("tnr-form-without-delta", BOUNDS, "epsilon_bounds",
           "np.maximum(tnr_lo - delta, 0.0)", "np.maximum(tnr_lo, 0.0)",
           (f"{AUDT}::test_the_tnr_form_subtracts_delta_like_the_tpr_form",)),
    Mutant("threshold-chosen-on-evaluation-runs", BOUNDS, "empirical_epsilon",
           "_confusion_at(cal_out, cal_in, mids)", "_confusion_at(ev_out, ev_in, mids)",
           (f"{AUDT}::test_the_threshold_is_chosen_on_calibration_scores_even_when_evaluation_would_favour_another",)),
    Mutant("form-chosen-on-evaluation-runs", BOUNDS, "empirical_epsilon",
           "float(f1 if form == 'tpr/fpr' else f2)", "float(max(f1, f2))",
           (f"{AUDT}::test_the_form_is_chosen_on_calibration_and_only_its_bound_is_reported",)),
    Mutant("auc-u-of-the-wrong-class", BOUNDS, "roc_auc",
           "si.size * (si.size + 1) / 2.0", "so.size * (so.size + 1) / 2.0",
           (f"{AUDT}::test_the_auc_is_mann_whitney_for_classes_of_different_sizes",)),
    Mutant("violation-at-equality", MEMB, "verdict_for", "epsilon_lb > claimed", "epsilon_lb >= claimed",
           (VERDICT_EDGES,)),
    Mutant("claim-at-the-ceiling-consistent", MEMB, "verdict_for",
           "claimed >= max_certifiable", "claimed > max_certifiable", (VERDICT_EDGES,)),
    Mutant("summary-reports-the-first-row", MEMB, "summarize",
           "max(rows, key=lambda r: (r['epsilon_lb'], r['auc']))", "rows[0]",
           (f"{AUDT}::test_the_summary_reports_the_strongest_attack_of_any_target",)),
    Mutant("lr-certified-on-its-calibration-runs", MEMB, "audit_target",
           "Z_ev = np.vstack([feats[0, half:], feats[1, half:]])", "Z_ev = np.vstack([feats[0, :half], feats[1, :half]])",
           (f"{AUDT}::test_the_lr_attack_is_certified_on_runs_it_was_not_fitted_on",)),
    Mutant("audit-of-three-runs-accepted", MEMB, "audit_target", "runs < 4", "runs < 3", (FOUR_RUNS,)),
    Mutant("summable-audit-of-three-runs-accepted", MEMB, "audit_summable_target", "runs < 4", "runs < 3",
           (FOUR_RUNS,)),
    Mutant("audit-confidence-of-one-accepted", MEMB, "check_audit_options", "not 0 < confidence < 1",
           "not 0 < confidence <= 1", (f"{AUDT}::test_a_confidence_of_zero_or_one_or_beyond_is_refused",)),
    Mutant("audit-user-target-without-id-accepted", MEMB, "check_audit_options", "len(spec) > 5", "len(spec) >= 5",
           (f"{AUDT}::test_a_user_target_without_an_id_is_refused_before_the_audit_is_planned",)),
    Mutant("lr-ceiling-of-the-whole-evaluation-half", MEMB, "audit_target", "n_cert = runs - half - q",
           "n_cert = runs - half", (LR_CEILING,)),
    Mutant("summable-lr-ceiling-of-the-whole-evaluation-half", MEMB, "audit_summable_target", "runs - half - q",
           "runs - half", (LR_CEILING,)),
    Mutant("audit-family-without-v-residual", MEMB, "run_audit",
           "len(dict.fromkeys([*attacks, *(['v-residual'] if with_v else [])]))", "len(dict.fromkeys(attacks))",
           (AUDIT_FAMILIES,)),
    Mutant("summable-family-counts-prototype-attacks", MEMB, "run_audit",
           "n_summable if is_summable(mname) else n_attacks", "n_attacks", (AUDIT_FAMILIES,)),
    Mutant("audit-config-states-the-smallest-family", MEMB, "run_audit", "max((family_of(m) for m in methods))",
           "min((family_of(m) for m in methods))", (AUDIT_FAMILIES,)),
    Mutant("power-check-always-detects", MEMB, "power_check", "bool(best['epsilon_lb'] > claim[0])", "True",
           (FAILED_POWER,)),
    Mutant("failed-power-check-keeps-consistent", MEMB, "run_audit", "row['verdict'] = 'inconclusive'", "pass",
           (FAILED_POWER,)),
    Mutant("summary-verbatim-the-smallest", MEMB, "summarize", "max((r.get('verbatim_in', 0.0) for r in rows))",
           "min((r.get('verbatim_in', 0.0) for r in rows))", (SUMMARY_LARGEST,)),
    Mutant("summary-tpr-of-the-first-row", MEMB, "summarize", "_nanmax([r['tpr_at_fpr'][f] for r in rows])",
           "rows[0]['tpr_at_fpr'][f]", (SUMMARY_LARGEST,)),
    Mutant("prototypes-note-at-k-equal-users", MEMB, "prototypes_note", "k <= n", "k < n",
           (f"{AUDT}::test_a_k_equal_to_the_entitys_users_is_no_reason_for_a_note_and_one_more_is",)),
    Mutant("lr-scores-out-runs-higher", MEMB, "_gaussian_lr", "loglik(Zs, fit(cal_in)) - loglik(Zs, fit(cal_out))",
           "loglik(Zs, fit(cal_out)) - loglik(Zs, fit(cal_in))",
           (f"{AUDT}::test_the_lr_attack_scores_in_runs_higher_so_a_release_that_always_leaks_reaches_its_ceiling",)),
    Mutant("audit-tpr-at-an-unresolvable-fpr-shown", MEMB, "audit_target", "tpr_at_fpr(fpr, tpr, f, roc_out.size)",
           "tpr_at_fpr(fpr, tpr, f)",
           (f"{AUDT}::test_a_false_positive_rate_finer_than_one_out_run_is_not_resolved_in_the_audits_rows",)),
    # the factorisations, public item features, dp-als and the catalogue keys a site maps its items to
    Mutant("observed-sweep-tol-absolute", FACTOR, "_observed_sweeps",
           "delta <= tol * max(float(np.max(np.abs(W), initial=0.0)), 1e-12)", "delta <= tol", (ROW_FIT_STOP,)),
    Mutant("init-scale-quartered", FACTOR, "init_factors",
           "np.sqrt(max(scale, 1e-12) / rank) * 2.0", "np.sqrt(max(scale, 1e-12) / rank)",
           (f"{FACTORT}::test_the_starting_factors_have_the_mean_product_asked_for",)),
    Mutant("weighted-u-not-unscaled", FACTOR, "fit_nmf",
           "U = np.where(sw[:, None] > 0, U / np.where(sw[:, None] > 0, sw[:, None], 1), 0.0)", "pass",
           (f"{FACTORT}::test_row_weights_leave_u_predicting_the_unweighted_rows",)),
    Mutant("observed-init-mean-over-all-cells", FACTOR, "fit_nmf",
           "max(X.nnz, 1)", "n * m", (f"{FACTORT}::test_an_observed_fit_starts_at_the_mean_of_the_observed_entries",)),
    Mutant("rows-given-zero-tol-absolute", FACTOR, "fit_rows_given",
           "delta <= tol * max(float(np.max(np.abs(U))), 1e-12)", "delta <= tol", (ROW_FIT_STOP,)),
    # a noisy released cluster size below zero turned into NaN factors for every site of the run
    Mutant("fact-negative-weight-not-clipped", FACTOR, "fit_nmf",
           "np.maximum(np.asarray(weights, dtype=np.float64), 0.0)", "np.asarray(weights, dtype=np.float64)",
           (f"{FACTORT}::test_a_negative_row_weight_counts_as_zero",)),
    # a site without training rows fails its round 2 instead of getting empty factors
    Mutant("fact-rows-given-empty-not-returned", FACTOR, "fit_rows_given", "if n == 0:\n    return U", "pass",
           (f"{FACTORT}::test_a_row_fit_of_no_rows_is_no_factors",)),
    # round 2's row factors stop several per cent short of the ridge-NNLS solution they are said to be
    Mutant("fact-rows-given-default-tol-loose", FACTOR, "fit_rows_given", "1e-06", "0.001", (ROWS_GIVEN_DEFAULTS,)),
    Mutant("fact-rows-given-default-sweeps-few", FACTOR, "fit_rows_given", "100", "10", (ROWS_GIVEN_DEFAULTS,)),
    # round 2's row fit takes an unknown observation mode for "observed" instead of refusing it
    Mutant("fact-rows-given-mode-unchecked", FACTOR, "fit_rows_given", "check_mode(mode)", "None",
           (f"{FACTORT}::test_bad_parameters",)),
    Mutant("slice-beyond-users-accepted", EFAC, "EntityFactors.__init__",
           "0 <= sl.start <= sl.stop <= n", "0 <= sl.start <= sl.stop", (OUTSIDE_MODEL,)),
    Mutant("local-item-at-n-items-accepted", EFAC, "EntityFactors.__init__",
           "0 <= loc.items.min() <= loc.items.max() < self.n_items",
           "0 <= loc.items.min() <= loc.items.max() <= self.n_items",
           (OUTSIDE_MODEL,)),
    Mutant("local-count-mismatch-accepted", EFAC, "EntityFactors.__init__",
           "len(self.local) != len(self.slices)", "False", (OUTSIDE_MODEL,)),
    Mutant("on-keys-key-zero-dropped", EFAC, "EntityFactors.on_keys",
           "items = np.flatnonzero(item_key >= 0)", "items = np.flatnonzero(item_key > 0)", (ON_KEYS,)),
    Mutant("on-keys-local-unreleased-kept", EFAC, "EntityFactors.on_keys",
           "sel = items[pos[item_key[items]] >= 0]", "sel = items", (ON_KEYS,)),
    Mutant("as-entity-factors-ignores-v", EFAC, "as_entity_factors", "V is not None", "False", (OUTSIDE_MODEL,)),
    # an entity's rows before the first user or ending before they start, and local item rows that are
    # no items of the model or more than its factor rows, would score users with columns not theirs
    Mutant("entity-rows-from-a-negative-start-accepted", EFAC, "EntityFactors.__init__",
           "0 <= sl.start <= sl.stop <= n", "sl.start <= sl.stop <= n", (REVERSED_ROWS,)),
    Mutant("reversed-entity-rows-accepted", EFAC, "EntityFactors.__init__",
           "0 <= sl.start <= sl.stop <= n", "0 <= sl.start and sl.stop <= n", (REVERSED_ROWS,)),
    Mutant("local-items-not-matching-their-rows-accepted", EFAC, "EntityFactors.__init__",
           "loc.items.shape[0] != loc.L.shape[0]", "False", (REVERSED_ROWS,)),
    Mutant("negative-local-item-accepted", EFAC, "EntityFactors.__init__",
           "0 <= loc.items.min() <= loc.items.max() < self.n_items", "loc.items.max() < self.n_items",
           (REVERSED_ROWS,)),
    # stored arrays of the shared factors alone read back as that model, not refused for lacking slices
    Mutant("shared-only-arrays-refused", EFAC, "EntityFactors.from_arrays", "'slices' not in arrays", "False",
           ("tests/test_entity_factors.py::test_on_items_and_storage_round_trip",)),
    Mutant("smoothing-feature-values-kept", SIDE, "smooth_over_features", "F.data[:] = 1.0", "pass", (SMOOTHING,)),
    Mutant("smoothing-item-mean-not-averaged", SIDE, "smooth_over_features",
           "(F @ feature_mean) / np.maximum(n_feat, 1.0)", "F @ feature_mean", (SMOOTHING,)),
    Mutant("smoothing-weight-swapped", SIDE, "smooth_over_features",
           "(1.0 - weight) * s + weight * item_mean", "weight * s + (1.0 - weight) * item_mean", (SMOOTHING,)),
    Mutant("content-without-idf", SIDE, "content_factors",
           "V = F / np.sqrt(np.maximum(present, 1.0))", "V = F",
           (f"{SIDET}::test_content_factors_weigh_a_feature_every_item_has_below_a_rare_one",)),
    Mutant("als-init-popularity-not-unit", ALS, "_initial_factors", "V[:, 0] = g / n", "V[:, 0] = g", (ALS_SERVER,)),
    Mutant("als-user-factors-without-ridge", ALS, "_user_factors",
           "V.T @ V + lam * np.eye(r)", "V.T @ V + 1e-09 * np.eye(r)", (ALS_ZERO_STATS,)),
    Mutant("als-user-factors-negative", ALS, "_user_factors",
           "np.maximum(np.asarray(sp.csr_matrix(X) @ V) @ A, 0.0)", "np.asarray(sp.csr_matrix(X) @ V) @ A",
           (ALS_ZERO_STATS,)),
    Mutant("als-item-solve-not-psd", ALS, "_item_solve",
           "np.maximum(w, 0.0)", "w", (f"{ALST}::test_the_item_solve_projects_the_noisy_gram_on_the_psd_cone",)),
    Mutant("als-ridge-edge-halved", ALS, "DPALS.combine",
           "float(self.lam) + 2.0 * math.sqrt(r) * sigma_sum", "float(self.lam) + math.sqrt(r) * sigma_sum",
           (ALS_SERVER,)),
    Mutant("als-sigma-sum-one-share", ALS, "DPALS.combine",
           "plan['sigma'][stage] / plan['divisor'] * math.sqrt(n_participants)",
           "plan['sigma'][stage] / plan['divisor']",
           (ALS_SERVER,)),
    Mutant("als-selects-least-popular", ALS, "DPALS.combine",
           "np.argsort(-total, kind='stable')", "np.argsort(total, kind='stable')", (ALS_SERVER,)),
    Mutant("als-final-popularity-not-unit", ALS, "DPALS.combine",
           "g = g / max(float(np.linalg.norm(g)), 1e-300)", "pass", (ALS_SERVER,)),
    Mutant("als-zero-mode-gram-unweighted", ALS, "DPALS.share",
           "G = (U.T @ U)[iu] * w", "G = (U.T @ U)[iu]", (ALS_ZERO_STATS,)),
    Mutant("als-pop-share-one-accepted", ALS, "DPALS.check",
           "0 < self.pop_share < 1", "0 < self.pop_share <= 1",
           (f"{ALST}::test_a_popularity_share_of_zero_or_all_of_the_budget_is_refused",)),
    Mutant("als-zero-mode-b-transposed", ALS, "DPALS.share",
           "np.asarray(sp.csr_matrix(Xs).T @ U).T.ravel()", "np.asarray(sp.csr_matrix(Xs).T @ U).ravel()",
           (ALS_ZERO_STATS,)),
    Mutant("prototypes-k-equal-users-noted", PROTOS, "PrototypeMethod.effective_k",
           "n < self.k", "n <= self.k",
           (f"{PROTOT}::test_a_prototype_method_sends_k_prototypes_and_one_per_user_only_below_k",)),
    Mutant("prototypes-k-zero-accepted", PROTOS, "PrototypeMethod.effective_k",
           "self.k < 1", "self.k < 0",
           (f"{PROTOT}::test_a_prototype_method_sends_k_prototypes_and_one_per_user_only_below_k",)),
    Mutant("krandom-with-replacement", PROTOS, "KRandomPrototypes.release",
           "rng.choice(X.shape[0], size=k, replace=False)", "True",
           (f"{PROTOT}::test_krandom_sends_k_distinct_rows_and_kmeans_its_cluster_sizes",), arg="replace"),
    Mutant("no-prototypes-labelled-private", PROTOS, "_no_prototypes",
           "ledger.spend('prototypes', 'no prototypes (no users; non-private method)', math.inf)", "0.0",
           (f"{PROTOT}::test_an_entity_without_users_sends_nothing_and_is_still_labelled_non_private",), arg=2),
    Mutant("kmeans-counts-ones", PROTOS, "KMeansPrototypes.release",
           "np.bincount(km.labels_, minlength=k).astype(np.float64)", "np.ones(k)",
           (f"{PROTOT}::test_krandom_sends_k_distinct_rows_and_kmeans_its_cluster_sizes",)),
    Mutant("selection-delta-one-accepted", CAT, "selection_threshold",
           "0 < delta < 1", "0 < delta", (SELECTION_RANGES,)),
    Mutant("bounded-rows-first-items", CAT, "_bounded_rows",
           "key = rng.random(X.nnz)", "key = np.zeros(X.nnz)",
           (f"{SCAT}::test_a_user_keeps_a_uniform_random_subset_of_c_of_their_items",)),
    Mutant("level-shares-full-name-salt", CAT, "item_bucket_levels",
           "b'dpfed-catlevel'", "b'dpfed-catalog1'",
           (f"{SCAT}::test_a_coarse_level_is_hashed_apart_from_a_full_name_of_the_same_text",)),
    Mutant("phantom-half-accepted", CAT, "secure_threshold_z",
           "0 < phantom_share < 0.5", "0 < phantom_share < 1", (SELECTION_RANGES,)),
    Mutant("key-matrix-key-zero-dropped", CAT, "key_matrix",
           "rows = np.flatnonzero(item_key >= 0)", "rows = np.flatnonzero(item_key > 0)", (KEY_MAPS,)),
    Mutant("on-item-axis-key-zero-dropped", CAT, "on_item_axis",
           "rows = np.flatnonzero(item_key >= 0)", "rows = np.flatnonzero(item_key > 0)", (KEY_MAPS,)),
    Mutant("item-keys-missing-level-is-bucket-zero", CAT, "item_keys",
           "np.where(levels >= 0, pos[np.maximum(levels, 0)], -1)", "pos[np.maximum(levels, 0)]",
           (f"{SCAT}::test_a_leaf_without_a_level_is_never_mapped_to_bucket_zero",)),
    Mutant("catalogue-items-per-user-zero-accepted", CAT, "secure_catalogue_share",
           "c < 1", "c < 0", (f"{SCAT}::test_a_share_needs_at_least_one_item_per_user",)),
    Mutant("selection-items-per-user-zero-accepted", CAT, "selection_threshold", "c < 1", "c < 0", (SELECTION_RANGES,)),
    Mutant("per-entity-catalogue-intersection", CAT, "select_catalogue",
           "np.unique(np.concatenate([v for v in released.values()] or [np.zeros(0, np.int64)]))",
           "np.unique(list(released.values())[0]) if released else np.zeros(0, np.int64)",
           (f"{SCAT}::test_per_entity_selection_releases_the_union_of_the_entities_items",)),
    Mutant("catalogue-divisor-ignores-dropouts", CATRUN, "secure_catalogue_divisor",
           "math.sqrt(int(n_entities) - int(config.max_dropouts))", "math.sqrt(int(n_entities))", (DIVISOR_COALITION,)),
    Mutant("coalition-least-exposed-entity", CATRUN, "coalition_with_catalogue",
           "max((entity_coalition(config, n_entities, method_coalition, rs)[0] for rs in rhos.values()), "
           "default=entity_coalition(config, n_entities, method_coalition, None)[0])",
           "min((entity_coalition(config, n_entities, method_coalition, rs)[0] for rs in rhos.values()), "
           "default=entity_coalition(config, n_entities, method_coalition, None)[0])",
           (DIVISOR_COALITION,)),
    Mutant("catalogue-messages-after-method", CATRUN, "_on_catalogue",
           "messages + list(result.messages)", "list(result.messages) + messages", (SELECTION_FIRST,)),
    Mutant("catalogue-note-last", CATRUN, "_on_catalogue",
           "[note, *result.extra.get('notes', [])]", "[*result.extra.get('notes', []), note]", (SELECTION_FIRST,)),
    Mutant("catalogue-note-keys-of-items", CATRUN, "secure_catalogue_note",
           "cat.SECURE_CATALOGUE_BUCKETS", "n_items",
           (f"{SCAT}::test_the_catalogue_note_states_the_keys_kept_of_the_public_buckets_and_the_items_they_cover",)),
    Mutant("forecast-weight-not-subsampled", CATFC, "forecast_catalogue",
           "np.minimum(1.0, c / per_user) / np.sqrt(np.minimum(per_user, c))", "1.0 / np.sqrt(np.minimum(per_user, c))",
           (f"{SITEMS}::test_a_users_weight_in_the_forecast_is_their_chance_of_keeping_an_item_over_root_c",)),
    Mutant("forecast-per-entity-threshold-k", CATFC, "forecast_catalogue",
           "float(1 + k)", "float(k)", (PER_ENTITY_FORECAST,)),
    Mutant("forecast-per-entity-unheld-items-count", CATFC, "forecast_catalogue",
           "p[n == 0] = 0.0", "pass", (PER_ENTITY_FORECAST,)),
    Mutant("forecast-per-entity-not-bounded", CATFC, "forecast_catalogue",
           "np.minimum(1.0, c / np.maximum(per_user, 1))", "np.ones(per_user.size)", (PER_ENTITY_FORECAST,)),
    Mutant("forecast-per-entity-epsilon-whole", CATFC, "forecast_catalogue",
           "entity_catalogue_budget(config)", "(config.epsilon, *entity_catalogue_budget(config)[1:])",
           (PER_ENTITY_FORECAST,)),
    Mutant("forecast-text-95-at-z196", CATFC, "CatalogueForecast.text",
           "self.threshold + 1.645 * self.sigma", "self.threshold + 1.96 * self.sigma", (PER_ENTITY_FORECAST,)),
    Mutant("forecast-per-entity-tail-sign", CATFC, "forecast_catalogue",
           "np.where(t >= 1, tail, 1 - tail)", "np.where(t >= 1, 1 - tail, tail)", (PER_ENTITY_FORECAST,)),
    Mutant("forecast-sum-of-survivors-only", CATFC, "forecast_catalogue", "cat.secure_catalogue_threshold(rho, H)",
           "H - int(config.max_dropouts)",
           ("tests/test_site_items.py::test_with_dropouts_allowed_the_forecast_is_the_threshold_of_the_sum_of_every_entitys_share",),
           arg=1),
    # the data sets a run loads, the report and figures, the CLI arguments and the dashboard helpers
    Mutant("feat-name-fallback-dropped", FEATURES, "attach_item_features", "row_of.get(a, row_of.get(b, -1))",
           "row_of.get(a, -1)", (f"{LISTST}::test_item_features_match_an_item_by_its_name_when_no_row_has_its_id",)),
    Mutant("feat-single-item-keys-kept", FEATURES, "_indicators", "c >= 2", "c >= 1", (NAME_KEYS,)),
    Mutant("feat-hyphen-not-split", FEATURES, "drug_token_features", r"re.split(r'[\s\-/,]+', str(nm).lower())",
           r"re.split(r'[\s/,]+', str(nm).lower())", (NAME_KEYS,)),
    Mutant("ds-ratings-default-bound-10", DATASET, "FederatedDataset.from_parts", "value_max = 5.0",
           "value_max = 10.0",
           (f"{LOADERT}::test_declared_bounds_default_to_the_scale_of_the_value_kind_and_counts_need_one",)),
    Mutant("ds-density-per-user", DATASET, "FederatedDataset.summary", "max(n_h * self.n_items, 1)", "max(n_h, 1)",
           (ENTITY_SUMMARY,)),
    Mutant("ds-items-used-counts-users", DATASET, "FederatedDataset.summary", "np.diff(Xh.tocsc().indptr)",
           "np.diff(Xh.indptr)", (ENTITY_SUMMARY,)),
    Mutant("ds-merged-keys-not-clipped", DATASET, "merge_key_columns", "np.minimum(out.data, value_max, out=out.data)",
           "None", (f"{LOADERT}::test_merged_items_sum_a_users_values_and_clip_them_to_the_declared_bound",)),
    Mutant("ds-select-items-keeps-source", DATASET, "FederatedDataset.select_items", "item_source or self.item_source",
           "self.item_source", (f"{LOADERT}::test_selected_items_take_the_item_source_they_are_given",)),
    Mutant("ds-undeclared-label-sorted-in", DATASET, "FederatedDataset.from_parts",
           "(codes >= len(names)) | (names[np.minimum(codes, len(names) - 1)] != labels)", "codes >= len(names)",
           (f"{LOADERT}::test_a_label_outside_the_declared_entity_list_is_refused_by_name",)),
    Mutant("syn-exceedance-at-the-bound", SYNTH, "make_poisson", "v > value_max", "v >= value_max",
           (f"{SYNTHT}::test_the_exceedance_note_counts_counts_strictly_above_the_bound",)),
    Mutant("syn-one-user-per-entity-refused", SYNTH, "make_poisson", "n_entities > n_users", "n_entities >= n_users",
           (f"{SYNTHT}::test_as_many_entities_as_users_gives_each_entity_one_user",)),
    # the synthetic data of the paper's experiments: a seed that does not reproduce (or is ignored), sizes not
    # the stated rounding of the stated weights, a parameter out of range accepted or refused in numpy's
    # words, a log rate missing one of its parts or calibrated without it, the clinic with other hospitals
    Mutant("syn-int-seed-ignored", SYNTH, "_as_rng", "np.random.default_rng(rng)", "np.random.default_rng(0)",
           (SYN_SEED,)),
    Mutant("syn-no-seed-refused", SYNTH, "_as_rng", "rng is None or isinstance(rng, (int, np.integer))",
           "isinstance(rng, (int, np.integer))", (SYN_SEED,)),
    Mutant("syn-varied-weights-unfloored", SYNTH, "entity_sizes",
           "np.maximum(np.exp(rng.normal(0.0, 0.6, n_entities)), 0.3)", "np.exp(rng.normal(0.0, 0.6, n_entities))",
           (SYN_VARIED,)),
    Mutant("syn-leftover-users-to-smallest-remainders", SYNTH, "entity_sizes", "np.argsort(-(raw - out), kind='stable')",
           "np.argsort(raw - out, kind='stable')", (SYN_VARIED,)),
    Mutant("syn-weights-of-another-length", SYNTH, "entity_sizes", "w.shape != (n_entities,)", "False", (SYN_WEIGHTS,)),
    Mutant("syn-weights-non-finite", SYNTH, "entity_sizes", "not np.all(np.isfinite(w))", "False", (SYN_WEIGHTS,)),
    Mutant("syn-zero-weight-told-to-add-users", SYNTH, "entity_sizes", "np.any(w <= 0)", "np.any(w < 0)",
           (SYN_WEIGHTS,)),
    Mutant("syn-bool-size-accepted", SYNTH, "make_poisson", "isinstance(v, bool)", "False", (SYN_LIMITS,)),
    Mutant("syn-density-zero-in-numpys-words", SYNTH, "make_poisson", "0 < density < 1", "0 <= density < 1",
           (SYN_LIMITS,)),
    Mutant("syn-density-one-accepted", SYNTH, "make_poisson", "0 < density < 1", "0 < density <= 1", (SYN_LIMITS,)),
    Mutant("syn-negative-entity-effect", SYNTH, "make_poisson", "0 <= entity_effect < 1", "entity_effect < 1",
           (SYN_LIMITS,)),
    Mutant("syn-negative-sd-in-numpys-words", SYNTH, "make_poisson", "min(interaction_sd, item_sd, entity_item_sd) < 0",
           "False", (SYN_LIMITS,)),
    Mutant("syn-interaction-sd-shrinks-with-rank", SYNTH, "make_poisson", "np.sqrt(interaction_sd / np.sqrt(rank))",
           "np.sqrt(interaction_sd / rank)", (SYN_SD,)),
    Mutant("syn-entity-effect-adds-variance", SYNTH, "make_poisson", "np.sqrt(1.0 - entity_effect)", "1.0", (SYN_SD,)),
    Mutant("syn-density-calibrated-without-entity-offsets", SYNTH, "make_poisson", "a + E[ent[cal]] + U[cal] @ V.T",
           "a + U[cal] @ V.T", (SYN_DENSITY,)),
    Mutant("syn-item-popularity-dropped", SYNTH, "make_poisson", "eta += a", "pass", (SYN_RATES,)),
    Mutant("syn-entity-item-offsets-dropped", SYNTH, "make_poisson", "eta += E[ent[start:stop]]", "pass", (SYN_RATES,)),
    Mutant("syn-entity-item-offsets-of-the-first", SYNTH, "make_poisson", "E[ent[start:stop]]", "E[0]", (SYN_RATES,)),
    Mutant("syn-literal-link-offset", SYNTH, "make_poisson",
           "0.0 if density is None else brentq(_excess, -60.0, 20.0, xtol=1e-10)",
           "brentq(_excess, -60.0, 20.0, xtol=1e-10) if density is not None else -1.0", (SYN_RATES,)),
    Mutant("syn-not-generated", SYNTH, "make_poisson", "dataclasses.replace(ds, generated=True)", "ds", (SYN_RATES,)),
    Mutant("syn-factors-entity-index-shifted", SYNTH, "make_poisson",
           "{'U': U, 'V': V, 'a': a, 'E': E, 'b': b, 'entity': ent}",
           "{'U': U, 'V': V, 'a': a, 'E': E, 'b': b, 'entity': ent + 1}", (SYN_RATES,)),
    Mutant("syn-clinic-one-hospital", SYNTH, "make_clinic", "n_hospitals < 2", "n_hospitals < 1", (SYN_CLINIC,)),
    Mutant("syn-clinic-floor-not-added", SYNTH, "make_clinic", "sizes += min_hospital", "pass", (SYN_CLINIC,)),
    Mutant("syn-clinic-every-substitute-on-formulary", SYNTH, "make_clinic", "formulary[:, idx] = off_formulary", "pass",
           (SYN_CLINIC,)),
    Mutant("syn-clinic-hospitals-from-00", SYNTH, "make_clinic", "f'hospital {h + 1:02d}'", "f'hospital {h:02d}'",
           (SYN_CLINIC,)),
    Mutant("syn-clinic-substitute-without-leaders-profile", SYNTH, "make_clinic",
           "prof[:, items.index(other)] = prof[:, lead]", "pass", (SYN_SUBSTITUTES,)),
    Mutant("syn-clinic-sizes-to-smallest-remainders", SYNTH, "make_clinic", "np.argsort(-(raw - sizes), kind='stable')",
           "np.argsort(raw - sizes, kind='stable')", (SYN_SUBSTITUTES,)),
    Mutant("syn-clinic-specialties-to-smallest", SYNTH, "make_clinic", "np.argsort(-sizes, kind='stable')",
           "np.argsort(sizes, kind='stable')", (SYN_SPECIALTY,)),
    # the re-export the odometer's tests take for the same people: if it changed more than asked, they would
    # test another dataset
    Mutant("syn-reexport-removes-nothing", SYNTH, "reexport",
           "keep[rng.choice(rows.size, remove, replace=False)] = False", "pass", (SYN_REEXPORT,)),
    Mutant("syn-reexport-adds-twos", SYNTH, "reexport", "np.ones(add)", "2 * np.ones(add)", (SYN_REEXPORT,)),
    Mutant("syn-reexport-relabel-ignored", SYNTH, "reexport", "np.char.add(relabel, names)", "names", (SYN_REEXPORT,)),
    Mutant("syn-reexport-ids-not-reordered", SYNTH, "reexport", "uid[order]", "uid", (SYN_REEXPORT,)),
    Mutant("sample-not-generated", SAMPLES_PY, "load_sample", "replace(ds, generated=True)", "ds",
           ("tests/test_sample_data.py::test_a_sample_is_marked_generated_whatever_its_federation",)),
    Mutant("sample-from-any-folder-marked-generated", SAMPLES_PY, "load_sample", "not _is_bundled(path, meta['file'])",
           "False", ("tests/test_sample_data.py::test_a_file_in_another_folder_under_a_samples_name_is_data_not_a_"
                     "generated_sample",)),
    Mutant("ml-100k-ages-right-closed", MOVIELENS, "load_movielens",
           "pd.cut(ages, bins, right=False, labels=list(_ML1M_AGES.values()))",
           "pd.cut(ages, bins, right=True, labels=list(_ML1M_AGES.values()))",
           (f"{LOADERT}::test_movielens_100k_ages_fall_in_the_1m_bands_each_band_from_its_lower_age",)),
    Mutant("ml-duplicate-users-accepted", MOVIELENS, "load_movielens", "users['user'].duplicated().any()", "False",
           (ML_REPEATS,)),
    Mutant("ml-duplicate-movies-accepted", MOVIELENS, "load_movielens",
           "(item_ids == '').any() or item_ids.duplicated().any()", "(item_ids == '').any()", (ML_REPEATS,)),
    Mutant("ml-empty-title-kept", MOVIELENS, "load_movielens", "titles.where(titles != '', item_ids)", "titles",
           (f"{LOADERT}::test_a_movie_without_a_title_is_named_by_its_id_and_keeps_its_genres",)),
    Mutant("eicu-combined-bound-smallest", EICU, "load_eicu", "vmax = max(bounds)", "vmax = min(bounds)",
           (f"{LOADERT}::test_eicu_tables_combined_take_the_largest_declared_bound",)),
    Mutant("eicu-hicl-least-common-name", EICU, "load_eicu",
           "best.sort_values(['code', 'n', 'name'], ascending=[True, False, True])",
           "best.sort_values(['code', 'n', 'name'], ascending=[True, True, True])",
           (f"{LOADERT}::test_an_eicu_medication_row_without_a_name_takes_the_name_most_often_recorded_with_its_code",)),
    Mutant("eicu-bare-ids-not-prefixed", EICU, "_eicu_entities", r"f'hospital {x}' if re.fullmatch(r'\d+', x) else x",
           "x", (f"{LOADERT}::test_a_declared_eicu_hospital_list_may_give_bare_hospital_ids",)),
    # the eICU loader: a unit stay without a hospital slips in, a blank region is not said, a table loses its
    # declared bound (the default, smaller one clips its counts), names one item splits in two, a table name
    # reads a file outside the folder
    Mutant("eicu-stay-without-hospital-accepted", EICU, "load_eicu", "miss.any()", "False",
           (f"{LOADERT}::test_an_eicu_unit_stay_without_a_hospital_is_refused_naming_its_row",)),
    Mutant("eicu-blank-region-stays-not-said", EICU, "load_eicu", "n_unknown = int(ent.isna().sum() + ent.eq('').sum())",
           "n_unknown = int(ent.isna().sum())",
           (f"{LOADERT}::test_eicu_stays_in_a_hospital_whose_region_is_blank_are_counted_in_the_unknown_region_note",)),
    Mutant("eicu-bound-looked-up-by-exact-case", EICU, "load_eicu", "EICU_VALUE_MAX.get(tb.lower())",
           "EICU_VALUE_MAX.get(tb)", (f"{LOADERT}::test_an_eicu_table_named_in_any_case_keeps_its_declared_bound",)),
    Mutant("eicu-undeclared-table-overrides-declared-bounds", EICU, "load_eicu",
           "vmax = max((b if b is not None else EICU_DEFAULT_VALUE_MAX for b in bounds))",
           "vmax = EICU_DEFAULT_VALUE_MAX",
           (f"{LOADERT}::test_an_undeclared_eicu_table_beside_a_declared_one_takes_the_larger_bound",)),
    Mutant("eicu-inner-spaces-split-an-item", EICU, "load_eicu", r"names = names.str.replace('\\s+', ' ', regex=True)",
           "pass", (f"{LOADERT}::test_eicu_event_names_differing_in_inner_spaces_are_one_item",)),
    Mutant("eicu-formulary-of-two-tables-read-as-drugs", EICU, "load_eicu",
           "len(names_cols) == 1 and names_cols[0][1]", "names_cols[0][1]",
           (f"{LOADERT}::test_a_formulary_of_combined_eicu_tables_names_items_with_their_table_unchanged",)),
    Mutant("eicu-brand-synonym-list-kept-whole", EICU, "normalize_drug_name", "re.split('[,;]', s)[0]", "s",
           (f"{LOADERT}::test_a_drug_name_listing_its_brand_synonyms_is_the_generic_of_the_first",)),
    Mutant("eicu-table-file-found-by-exact-case-only", EICU, "_find_table",
           "p.name.lower() in (f'{low}.csv.gz', f'{low}.csv')", "p.name in (f'{low}.csv.gz', f'{low}.csv')",
           (f"{LOADERT}::test_an_eicu_table_is_found_whatever_the_case_of_its_file_name",)),
    Mutant("eicu-ambiguous-event-column-guessed", EICU, "_event_name_column", "len(cands) != 1", "len(cands) < 1",
           (f"{LOADERT}::test_an_eicu_table_with_two_columns_that_may_name_its_event_asks_which",)),
    Mutant("eicu-table-name-may-be-a-path", EICU, "parse_event_tables",
           "not re.fullmatch('[A-Za-z0-9_]+', tb.strip())", "False",
           (f"{LOADERT}::test_an_eicu_event_table_named_with_a_path_is_refused_before_any_file_is_read",)),
    Mutant("eicu-event-list-of-no-table-accepted", EICU, "parse_event_tables", "not out", "False",
           (f"{LOADERT}::test_an_eicu_event_list_naming_no_table_is_refused_by_its_flag",)),
    Mutant("eicu-no-hospital-table-not-said", EICU, "_eicu_entities", "entity == 'region'", "True",
           (f"{LOADERT}::test_without_a_hospital_table_the_eicu_hospitals_are_read_from_the_data_and_said_so",), nth=0),
    Mutant("eicu-blank-hospital-id-declared", EICU, "_eicu_entities", "hid[hid != '']", "hid",
           (f"{LOADERT}::test_a_hospital_table_row_without_an_id_declares_no_hospital",)),
    Mutant("eicu-cancelled-orders-dropped-even-when-kept", EICU, "load_eicu",
           "tb.lower() == 'medication' and drop_cancelled and 'drugordercancelled' in ev.columns",
           "tb.lower() == 'medication' and 'drugordercancelled' in ev.columns",
           (f"{LOADERT}::test_eicu_cancelled_orders_are_kept_when_asked_and_hospital_is_hospitalid",)),
    Mutant("eicu-hospital-federation-refused", EICU, "load_eicu", "entity = 'hospitalid'", "pass",
           (f"{LOADERT}::test_eicu_cancelled_orders_are_kept_when_asked_and_hospital_is_hospitalid",)),
    Mutant("eicu-dose-from-its-decimal-point-kept-in-the-name", EICU, "normalize_drug_name",
           "tok.startswith(('0.', '.'))", "False",
           (f"{LOADERT}::test_a_dose_written_from_its_decimal_point_ends_the_drug_name",)),
    Mutant("eicu-formulary-reading-notes-lost", EICU, "load_eicu", "declared.notes = lf.notes + declared.notes", "pass",
           (f"{LOADERT}::test_what_the_eicu_formulary_reader_did_is_in_the_datasets_notes",)),
    Mutant("fmt-minus-infinity-positive", RFORMAT, "fmt_num", "'∞' if v > 0 else '−∞'", "'∞'", (REPORT_NUMBERS,)),
    Mutant("fmt-whole-floats-as-ints", RFORMAT, "fmt_num",
           "v == int(v) and abs(v) < 1e15 and not isinstance(x, float)",
           "v == int(v) and abs(v) < 1e15", (REPORT_NUMBERS,)),
    Mutant("fmt-bool-swapped", RFORMAT, "fmt_num", "'yes' if x else 'no'", "'no' if x else 'yes'", (REPORT_NUMBERS,)),
    Mutant("fmt-text-not-escaped", RFORMAT, "fmt_num", "html.escape(str(x))", "str(x)", (REPORT_NUMBERS,)),
    Mutant("report-epsilon-its-own-precision", RFORMAT, "fmt_eps", "epsilon_that_holds(v)", "fmt_num(v, 3)",
           (REPORT_NUMBERS,)),
    Mutant("sigma-for-rho-at-unit-sensitivity", "dpfed_core/privacy/noise.py", "gaussian_float_sigma_for_rho",
           "gaussian_float_rho(1.0, sensitivity, size)", "gaussian_float_rho(1.0, 1.0, size)",
           (f"{NOISE}::test_the_sigma_for_a_rho_is_the_smallest_whose_opendp_map_stays_within_it",)),
    Mutant("budget-left-rounded-to-nearest", STMT, "_rounded",
           "nearest >= x * (1 - 1e-9) if up else nearest <= x * (1 + 1e-9)",
           "nearest >= x * (1 - 1e-9) if up else True",
           ("tests/test_verdicts.py::test_budget_left_is_rounded_down_and_spend_up",)),
    Mutant("budget-line-spent-rounded-to-nearest", "dpfed_core/ui/budget.py", "budget_line",
           "f'Budget: no cap · ε {epsilon_that_holds(top.spent_epsilon)} spent{at} (most: {top.entity}){tail}'",
           "f'Budget: no cap · ε {_fmt(top.spent_epsilon)} spent{at} (most: {top.entity}){tail}'",
           ("tests/test_budget_ui.py::test_charged_run_and_sweep_refuse_before_computing",)),
    Mutant("shown-epsilon-rounded-to-nearest", STMT, "_rounded",
           "nearest >= x * (1 - 1e-9) if up else nearest <= x * (1 + 1e-9)",
           "True if up else nearest <= x * (1 + 1e-9)",
           (REPORT_NUMBERS, "tests/test_verdicts.py::test_format_epsilon_four_significant_digits_never_below_what_holds")),
    Mutant("fmt-cell-not-escaped", RFORMAT, "_cell", "f'<td>{_esc(v)}</td>'", "f'<td>{v}</td>'", (REPORT_NUMBERS,)),
    Mutant("fig-kmeans-labelled-private", RFIGURES, "_run_label",
           "math.isfinite(eps) and r['method'] not in ('kmeans', 'krandom')", "math.isfinite(eps)", (AUDIT_FIGURES,)),
    Mutant("fig-target-kind-ignored", RFIGURES, "audit_roc_figure", "r['target'] == n and r['target_kind'] == target",
           "False", (AUDIT_FIGURES,)),
    Mutant("fig-infinite-claim-off-axis", RFIGURES, "audit_epsilon_figure", "inf_x if is_inf else _f(r['epsilon'])",
           "_f(r['epsilon'])", (AUDIT_FIGURES,)),
    Mutant("plot-colour-slot-not-taken", PLOTS, "_derived_colors", "taken.setdefault(slot, name)", "None",
           (f"{DASHT}::test_unlisted_methods_never_share_a_colour",)),
    Mutant("plot-dots-at-many-entities", PLOTS, "metric_bars",
           "df.loc[df['entity'].astype(str) != 'overall', 'entity'].nunique() > MANY_ENTITIES",
           "df.loc[df['entity'].astype(str) != 'overall', 'entity'].nunique() >= MANY_ENTITIES", (METRIC_BARS,)),
    Mutant("plot-overall-not-last", PLOTS, "metric_bars",
           "entities = [e for e in entities if e != 'overall'] + ['overall']", "pass", (METRIC_BARS,)),
    Mutant("plot-dots-sorted-by-column", PLOTS, "metric_dots",
           "methods[0] if methods and methods[0] in wide.columns else wide.columns[0]", "wide.columns[0]",
           (METRIC_BARS,)),
    Mutant("plot-tradeoff-unsorted", PLOTS, "tradeoff_chart",
           "table[table['method'] == method].sort_values('epsilon')", "table[table['method'] == method]",
           (TRADEOFF_CHART,)),
    Mutant("plot-band-not-reversed", PLOTS, "tradeoff_chart", "np.r_[m + s, (m - s)[::-1]]", "np.r_[m + s, m - s]",
           (TRADEOFF_CHART,)),
    Mutant("plot-infinite-crossing-off-axis", PLOTS, "tradeoff_chart", "inf_x if math.isinf(crossing) else crossing",
           "crossing", (TRADEOFF_CHART,)),
    Mutant("plot-short-one-too-long", PLOTS, "_short", "s[:n - 1] + '…'", "s[:n] + '…'", (HEATMAPS,)),
    Mutant("plot-heatmap-wrong-axis", PLOTS, "prototype_heatmap", "np.abs(P).sum(axis=0)", "np.abs(P).sum(axis=1)",
           (HEATMAPS,)),
    Mutant("plot-factors-smallest", PLOTS, "factor_heatmap", "-V.sum(axis=1)", "V.sum(axis=1)", (HEATMAPS,)),
    Mutant("args-empty-entry-accepted", CLI_ARGS, "float_list", "any(not t.strip() for t in parts) and text.strip()",
           "False", (NUMBER_FLAGS,)),
    Mutant("args-largest-seed-in-list-refused", CLI_ARGS, "seed_list", "0 <= v <= MAX_SEED", "0 <= v < MAX_SEED",
           (NUMBER_FLAGS,)),
    Mutant("args-param-True-false", CLI_ARGS, "parse_params", "vl.lower() == 'true'", "vl == 'true'",
           (f"{CLIT}::test_param_values_are_typed_as_written",)),
    Mutant("args-plus-inf-refused", CLI_ARGS, "strict_float_is_overflow",
           "('inf', '+inf', 'infinity', '+infinity', '∞')", "('inf', 'infinity', '∞')", (NUMBER_FLAGS,)),
    Mutant("args-largest-lam-refused", CLI_ARGS, "run_config", "args.lam > MAX_LAM", "args.lam >= MAX_LAM",
           (RUN_LIMITS,)),
    Mutant("args-zero-second-wait-accepted", CLI_ARGS, "positive_seconds", "v > 0", "v >= 0", (WAIT_AND_AUDIT_FLAGS,)),
    Mutant("args-endless-wait-accepted", CLI_ARGS, "positive_seconds", "math.isfinite(v) and v > 0", "v > 0",
           (WAIT_AND_AUDIT_FLAGS,)),
    Mutant("deploy-round-timeout-read-as-plain-float", DEPLOY_CMD, "register_cli", "g.add_argument('--round-timeout')",
           "float", (WAIT_AND_AUDIT_FLAGS,), arg="type"),
    Mutant("audit-delta-read-as-plain-float", AUDIT_CMD, "register_cli", "g.add_argument('--delta')", "float",
           (WAIT_AND_AUDIT_FLAGS,), arg="type"),
    Mutant("audit-confidence-read-as-plain-float", AUDIT_CMD, "register_cli", "g.add_argument('--confidence')",
           "float", (WAIT_AND_AUDIT_FLAGS,), arg="type"),
    Mutant("audit-runs-read-as-plain-int", AUDIT_CMD, "register_cli", "g.add_argument('--runs')", "int",
           (WAIT_AND_AUDIT_FLAGS,), arg="type"),
    Mutant("audit-max-dropouts-read-as-plain-int", AUDIT_CMD, "register_cli", "g.add_argument('--max-dropouts')", "int",
           (WAIT_AND_AUDIT_FLAGS,), arg="type"),
    Mutant("args-rank-beyond-items", CLI_ARGS, "run_config", "min(MAX_RANK, dataset.n_items)", "MAX_RANK",
           (RUN_LIMITS,)),
    Mutant("args-delta-flag-ignored", CLI_ARGS, "run_config", "given('delta', base.delta)", "base.delta",
           (RUN_LIMITS,)),
    Mutant("args-delta-on-non-dp-accepted", CLI_ARGS, "unused_flags",
           "(('--epsilon', args.epsilon), ('--delta', args.delta))", "(('--epsilon', args.epsilon),)", (RUN_LIMITS,)),
    Mutant("args-audit-doc-writable", CLI_ARGS, "input_paths", "('audit', '--audit')", "('audit_doc', '--audit')",
           (f"{CLIT}::test_the_report_never_writes_over_a_document_it_reads",)),
    Mutant("rcmd-counts-are-metrics", REPORT_PY, "measured_metrics",
           "k not in ('name', 'n_users', 'n_test_users') and (v is None or isinstance(v, (int, float)))",
           "v is None or isinstance(v, (int, float))", (REPORT_COMMAND,)),
    Mutant("rcmd-public-ignored", REPORT_CMD, "cmd_report", "write_report(args.out, run)", "False",
           (REPORT_COMMAND,), arg="public"),
    Mutant("dcmd-shards-seed-ignored", DEPLOY_CMD, "cmd_write_shards", "RunConfig(seed=args.seed)", "RunConfig()",
           (f"{CLIT}::test_write_shards_splits_with_the_seed_it_is_given",)),
    Mutant("dcmd-shards-undeclared-rows-dropped", DEPLOY_CMD, "cmd_write_shards",
           "'error' if by_list else 'drop'", "'drop'",
           (f"{CLIT}::test_a_site_writes_the_shard_of_its_own_export_at_its_place_in_the_declared_federation",)),
    # the command line (cli/main.py): a refusal that no longer says how to fix it, a note without the flag
    # that changes what it describes, an output written over a file the run reads
    Mutant("climain-usage-error-without-the-attached-form", CLI_MAIN, "_Parser.error", "bare", "None",
           (f"{CLIT}::test_a_flag_whose_value_starts_with_a_minus_is_told_to_take_it_attached",), nth=1),
    Mutant("climain-trust-note-without-its-flag", CLI_MAIN, "_print_trust_note", "is_summable(method)", "False",
           (f"{CLIT}::test_the_trust_note_names_the_aggregation_flag_only_when_the_run_sets_it",)),
    Mutant("climain-run-out-over-an-input", CLI_MAIN, "cmd_run", "check_outputs(args, ('--out', args.out))", "None",
           (f"{CLIT}::test_a_runs_output_never_overwrites_a_list_it_reads_whatever_its_name",)),
    # the verdict line: said of an entity-alone method as if it were the federation, or never said
    Mutant("climain-verdict-of-an-entity-alone", CLI_MAIN, "cmd_run", "config.method not in VERDICT_BASELINES",
           "True", (f"{CLIT}::test_a_verdict_is_said_of_a_federation_never_of_an_entity_alone",)),
    Mutant("climain-verdict-never-said", CLI_MAIN, "cmd_run",
           "any((b in outcome.comparison for b in VERDICT_BASELINES))", "False",
           (f"{CLIT}::test_a_verdict_is_said_of_a_federation_never_of_an_entity_alone",)),
    # a sweep's non-private points charged to capped data without the flag that allows them
    Mutant("climain-sweep-non-private-without-permission", CLI_MAIN, "cmd_sweep",
           "execute_sweep(dataset, config, args.epsilons, args.seeds, args.references)", "True",
           (f"{ODOT}::test_cli_sweep_of_a_non_private_point_needs_permission_on_capped_data",), arg="allow_non_private"),
    Mutant("climain-sweep-charged-said-uncharged", CLI_MAIN, "cmd_sweep", "outcome.odometer.get('store')", "False",
           (f"{ODOT}::test_cli_sweep_of_a_non_private_point_needs_permission_on_capped_data",)),
    # the budget line after a run: the run's δ read as the default, so a run at another δ reads as a contradiction
    Mutant("climain-budget-line-at-the-default-delta", CLI_MAIN, "cmd_run",
           "budget_cmd.budget_summary_line(budget_cmd.open_odometer(args), outcome.odometer['dataset_key'], "
           "budget_cmd.budget_show_command(args))", "1e-6",
           (f"{ODOT}::test_cli_budget_line_states_the_runs_own_delta_beside_the_budgets",), arg="run_delta"),
    # a sweep's grid that repeats a seed or an ε: one configuration counted twice in its mean ± sd
    Mutant("climain-sweep-repeated-seed-accepted", CLI_MAIN, "check_sweep_args", "check_grid(args.seeds, '--seeds')",
           "None", (f"{CLIT}::test_a_sweep_grid_that_repeats_a_value_is_refused_naming_its_flag_before_the_data_is_read",)),
    Mutant("climain-sweep-repeated-epsilon-accepted", CLI_MAIN, "check_sweep_args",
           "check_grid(args.epsilons, '--epsilons')", "None",
           (f"{CLIT}::test_a_sweep_grid_that_repeats_a_value_is_refused_naming_its_flag_before_the_data_is_read",)),
    Mutant("climain-sweep-unknown-metric-accepted", CLI_MAIN, "check_sweep_args",
           "args.metric not in _known_metrics(top_n)", "False",
           (f"{CLIT}::test_a_sweep_metric_that_is_not_one_is_refused_listing_the_metrics_of_its_top_n",)),
    # a resumed sweep without --out: its finished document written nowhere, or a complete one run (dry) again
    Mutant("climain-sweep-resume-written-nowhere", CLI_MAIN, "cmd_sweep", "out", "args.out",
           (f"{BREL}::test_cli_resume_without_out_completes_the_document_it_reads_and_a_complete_one_is_refused",),
           nth=2),
    Mutant("climain-sweep-complete-resume-dry-run-accepted", CLI_MAIN, "cmd_sweep", "args.resume and not plans",
           "False",
           (f"{BREL}::test_cli_resume_without_out_completes_the_document_it_reads_and_a_complete_one_is_refused",)),
    # a sweep every point of which would have no test user to measure, charged without a word
    Mutant("climain-sweep-silent-of-entities-without-test-users", CLI_MAIN, "cmd_sweep", "untested", "None",
           (f"{CLIT}::test_a_sweep_whose_entities_will_have_no_test_user_says_so_before_it_is_charged",), nth=1),
    # `methods`: every parameter listed without --params, or none with it
    Mutant("climain-methods-params-unasked", CLI_MAIN, "cmd_methods", "getattr(args, 'params', False)", "True",
           (f"{CLIT}::test_the_method_list_shows_each_methods_parameters_only_when_asked",)),
    Mutant("climain-methods-params-never-listed", CLI_MAIN, "cmd_methods", "getattr(args, 'params', False)", "False",
           (f"{CLIT}::test_the_method_list_shows_each_methods_parameters_only_when_asked",)),
    # what a run states besides its numbers: its notes, the settings it differs from the paper by, the flag of a warning
    Mutant("climain-statement-without-notes", CLI_MAIN, "print_run_statement", "doc.get('notes', [])", "[]",
           (f"{CLIT}::test_a_runs_statement_prints_every_note_and_the_settings_line_of_its_document",)),
    Mutant("climain-statement-without-settings", CLI_MAIN, "print_run_statement",
           "print(f\"settings: {paper_differences_text(doc['config'], doc)}\")", "None",
           (f"{CLIT}::test_a_runs_statement_prints_every_note_and_the_settings_line_of_its_document",)),
    Mutant("climain-statement-warning-without-its-flag", CLI_MAIN, "print_run_statement", "w.get('param')", "None",
           (f"{CLIT}::test_a_runs_statement_prints_every_note_and_the_settings_line_of_its_document",)),
    # a site's refusal rewritten into the coordinator's flags: the policy key it names is lost
    Mutant("climain-site-refusal-names-flags", CLI_MAIN, "render_error", "names = policy_names_kept(CLI_NAMES)", "pass",
           (f"{CLIT}::test_a_sites_refusal_keeps_its_policy_keys_where_a_coordinator_error_names_flags",)),
    # a negative number glued onto the value of a flag that already has one
    Mutant("climain-negative-number-glued-to-a-given-value", CLI_MAIN, "_negative_values_attached", "'=' not in out[-1]",
           "True", (f"{CLIT}::test_a_stray_number_after_a_value_given_attached_is_named_as_itself",)),
    # the command line's last boundary: an unreadable file, a lack of memory or a bug left as a traceback
    Mutant("climain-os-error-as-a-traceback", CLI_MAIN, "main",
           "print(f'error: could not read or write{where}: {exc.strerror or exc}', file=sys.stderr)", "raise",
           (f"{CLIT}::test_whatever_escapes_a_command_is_one_error_line_never_a_traceback",)),
    Mutant("climain-out-of-memory-as-a-traceback", CLI_MAIN, "main",
           "print('error: out of memory; use a smaller dataset, --rank or --k', file=sys.stderr)", "raise",
           (f"{CLIT}::test_whatever_escapes_a_command_is_one_error_line_never_a_traceback",)),
    Mutant("climain-internal-error-as-a-traceback", CLI_MAIN, "main", "return 2", "raise",
           (f"{CLIT}::test_whatever_escapes_a_command_is_one_error_line_never_a_traceback",), nth=4),
    # the command line's argument types and settings (cli/args.py): an empty grid, a count of zero, a shrink
    # factor that shrinks nothing, a parameter given twice or misread, a setting beyond what the machine or
    # the data allows reaching the engine, an output over the item features or the store's own files
    Mutant("cliargs-empty-epsilon-grid-accepted", CLI_ARGS, "float_list", "not vals", "False",
           (f"{CLIT}::test_an_empty_grid_is_refused_naming_its_flag",)),
    Mutant("cliargs-empty-seed-list-accepted", CLI_ARGS, "int_list", "not vals", "False",
           (f"{CLIT}::test_an_empty_grid_is_refused_naming_its_flag",)),
    Mutant("cliargs-count-of-zero-accepted", CLI_ARGS, "positive_whole_number", "v < 1", "v < 0",
           (f"{CLIT}::test_a_count_starts_at_one_and_a_noise_shrink_factor_is_above_one",)),
    Mutant("cliargs-shrink-factor-of-one-accepted", CLI_ARGS, "shrink_factor", "v > 1", "v >= 1",
           (f"{CLIT}::test_a_count_starts_at_one_and_a_noise_shrink_factor_is_above_one",)),
    Mutant("cliargs-param-given-twice-last-wins", CLI_ARGS, "parse_params", "k.strip().replace('-', '_') in out",
           "False", (f"{CLIT}::test_a_param_given_twice_or_malformed_is_refused_and_none_is_read_in_any_case",)),
    Mutant("cliargs-param-None-read-as-a-word", CLI_ARGS, "parse_params", "v.strip().lower() == 'none'",
           "v.strip() == 'none'", (f"{CLIT}::test_a_param_given_twice_or_malformed_is_refused_and_none_is_read_in_any_case",)),
    Mutant("cliargs-unknown-encoding-read-on", CLI_ARGS, "load_dataset", "_check_encoding_name(opts['encoding'])",
           "None", (f"{CLIT}::test_a_setting_beyond_what_the_machine_or_the_data_allows_is_refused_naming_its_flag",)),
    Mutant("cliargs-k-beyond-its-maximum", CLI_ARGS, "run_config", "isinstance(args.k, int) and args.k > MAX_K", "False",
           (f"{CLIT}::test_a_setting_beyond_what_the_machine_or_the_data_allows_is_refused_naming_its_flag",)),
    Mutant("cliargs-top-n-beyond-the-items", CLI_ARGS, "run_config",
           "isinstance(args.top_n, int) and args.top_n > dataset.n_items", "False", (f"{CLIT}::test_a_setting_beyond_what_the_machine_or_the_data_allows_is_refused_naming_its_flag",)),
    Mutant("cliargs-out-over-the-item-features", CLI_ARGS, "input_paths", "('item_features', '--item-features')",
           "('features', '--item-features')", (f"{CLIT}::test_a_runs_output_never_names_the_item_features_it_reads",)),
    # deploy-local (cli/deploy_cmd.py): its result document written over a file it reads
    Mutant("clideploy-out-over-an-input", DEPLOY_CMD, "cmd_deploy_local", "check_outputs(args, ('--out', args.out))",
           "None", (f"{CLIT}::test_a_runs_output_never_overwrites_a_list_it_reads_whatever_its_name",)),
    # deploy-local on the Simulation Engine: the backend asked for replaced by the default
    Mutant("clideploy-sim-backend-ignored", DEPLOY_CMD, "cmd_deploy_local", "args.sim_backend or SIM_DEFAULT_BACKEND",
           "SIM_DEFAULT_BACKEND",
           ("tests/test_simulation_engine.py::test_deploy_local_is_charged_to_its_store_and_a_non_private_one_needs_"
            "permission_on_capped_data",)),
    # a deployment charged to another store, a non-private one let past a cap, a charged one said uncharged
    Mutant("clideploy-store-flag-ignored", DEPLOY_CMD, "cmd_deploy_local", "execute_run(dataset, config)", "None",
           ("tests/test_simulation_engine.py::test_deploy_local_is_charged_to_its_store_and_a_non_private_one_needs_"
            "permission_on_capped_data",), arg="store"),
    Mutant("clideploy-non-private-without-permission", DEPLOY_CMD, "cmd_deploy_local", "execute_run(dataset, config)",
           "True", ("tests/test_simulation_engine.py::test_deploy_local_is_charged_to_its_store_and_a_non_private_one_needs_"
            "permission_on_capped_data",), arg="allow_non_private"),
    Mutant("clideploy-charged-said-uncharged", DEPLOY_CMD, "cmd_deploy_local", "outcome.odometer.get('store')", "False",
           ("tests/test_simulation_engine.py::test_deploy_local_is_charged_to_its_store_and_a_non_private_one_needs_"
            "permission_on_capped_data",)),
    Mutant("eng-min-max-swapped", UI_ENGINE, "server_view", "f'min {arr.min():.3g}, max {arr.max():.3g}'",
           "f'min {arr.max():.3g}, max {arr.min():.3g}'",
           (f"{DASHT}::test_the_server_view_states_each_released_quantitys_shape_and_range",)),
    Mutant("eng-rank-from-zero", UI_ENGINE, "recommend_table", "1 + np.searchsorted(higher, -scores[items], side='left')",
           "np.searchsorted(higher, -scores[items], side='left')", (USER_LIST,)),
    Mutant("eng-ties-ranked-apart", UI_ENGINE, "recommend_table", "1 + np.searchsorted(higher, -scores[items], side='left')",
           "np.arange(1, len(items) + 1)", (f"{DASHT}::test_equal_scores_share_a_rank_and_the_cut_through_a_tie_is_said",)),
    Mutant("eng-hits-on-train", UI_ENGINE, "recommend_table", "split.test[row].indices", "split.train[row].indices",
           (USER_LIST,)),
    Mutant("eng-suggests-names-the-site-never-held", UI_ENGINE, "recommend_table",
           "names_known_to(ds, split, result, entity)", "np.ones(ds.n_items, dtype=bool)",
           (f"{DASHT}::test_a_site_is_never_suggested_a_name_only_other_sites_hold_nor_shown_one_in_why",)),
    Mutant("eng-why-names-partners-the-site-never-held", UI_ENGINE, "explained_list", "key_partners(ds, result, known)",
           "key_partners(ds, result)",
           (f"{DASHT}::test_a_site_is_never_suggested_a_name_only_other_sites_hold_nor_shown_one_in_why",)),
    Mutant("eng-zero-ties-listed-in-catalogue-order", UI_ENGINE, "explained_list",
           "zeros and (df['score'] == 0).any()", "False",
           (f"{DASHT}::test_a_list_stops_before_candidates_the_model_scores_zero_and_says_how_many",)),
    Mutant("eng-excluded-mark-inverted", UI_ENGINE, "explained_list", "int(j) in out", "int(j) not in out",
           (f"{DASHT}::test_the_why_column_marks_only_the_items_the_dp_selection_left_out",)),
    Mutant("eng-declared-outside-unmarked", UI_ENGINE, "explained_list", "declared_outside_items(ds, result)", "None",
           (f"{DASHT}::test_the_why_column_marks_only_the_items_outside_a_declared_catalogue",)),
    Mutant("cat-private-not-first", UI_CATALOGUE, "federated_methods",
           "(m != DP_METHOD, not METHODS[m].uses_epsilon, m)", "(m != DP_METHOD, m)",
           (f"{DASHT}::test_federated_methods_list_the_dp_method_then_every_private_method_before_the_non_private",)),
    Mutant("wid-nan-shown", UI_WIDGETS, "fmt", "x is None or (isinstance(x, float) and math.isnan(x))", "x is None",
           (f"{DASHT}::test_the_pages_show_a_missing_number_as_a_dash",)),
    # the glue the pages share: a new dataset that leaves the old one's run or choices in place, an upload
    # served to another session from its cache key, a simulation that opens the owner's store, a run that
    # learned nothing shown as a mere warning, a job whose error never reaches the page
    Mutant("widgets-learned-nothing-as-warning", UI_WIDGETS, "run_messages",
           "w.get('code') in dash.LEARNED_NOTHING", "False",
           (f"{WIDT}::test_a_run_that_learned_nothing_is_an_error_and_only_notes_the_data_lacked_are_listed",)),
    Mutant("widgets-dataset-notes-repeated", UI_WIDGETS, "run_messages", "n not in dataset_notes", "True",
           (f"{WIDT}::test_a_run_that_learned_nothing_is_an_error_and_only_notes_the_data_lacked_are_listed",)),
    Mutant("widgets-notes-count-of-all", UI_WIDGETS, "run_messages", "len(notes)", "len(doc.get('notes', []))",
           (f"{WIDT}::test_a_run_that_learned_nothing_is_an_error_and_only_notes_the_data_lacked_are_listed",)),
    Mutant("widgets-budget-refusal-in-python-names", UI_WIDGETS, "show_error",
           "isinstance(exc, BudgetRefused)", "False",
           (f"{WIDT}::test_a_budget_refusal_names_the_dashboards_controls_and_another_error_is_one_message",)),
    Mutant("widgets-job-error-swallowed", UI_WIDGETS, "run_job", "raise job.error", "pass",
           (f"{WIDT}::test_a_jobs_error_reaches_the_page_and_a_second_submit_says_it_was_cached",)),
    Mutant("widgets-job-never-cached", UI_WIDGETS, "run_job", "(job.result, existed)", "(job.result, False)",
           (f"{WIDT}::test_a_jobs_error_reaches_the_page_and_a_second_submit_says_it_was_cached",)),
    Mutant("widgets-job-bar-past-95", UI_WIDGETS, "run_job",
           "min(0.95, job.elapsed / expected_seconds)", "job.elapsed / expected_seconds",
           (f"{WIDT}::test_a_job_without_progress_shows_at_most_95_percent_and_every_line_of_its_events",)),
    Mutant("widgets-job-late-lines-dropped", UI_WIDGETS, "run_job", "container.write(text)", "pass",
           (f"{WIDT}::test_a_job_without_progress_shows_at_most_95_percent_and_every_line_of_its_events",), nth=1),
    Mutant("widgets-job-running-lines-dropped", UI_WIDGETS, "run_job", "container.write(text)", "pass",
           (f"{WIDT}::test_a_job_without_progress_shows_at_most_95_percent_and_every_line_of_its_events",), nth=0),
    Mutant("widgets-non-private-allowed-by-default", UI_WIDGETS, "allow_non_private",
           "st.session_state.get(ALLOW_NP, False)", "st.session_state.get(ALLOW_NP, True)",
           (f"{WIDT}::test_non_private_releases_are_not_allowed_until_the_box_is_ticked",)),
    Mutant("widgets-simulation-run-opens-store", UI_WIDGETS, "run.compute",
           "None if config.simulation else history.owner_store(dataset)[0]", "history.owner_store(dataset)[0]",
           (f"{WIDT}::test_a_simulation_opens_no_store_and_a_run_is_charged_to_the_owners_as_the_page_asked",)),
    Mutant("widgets-simulation-sweep-opens-store", UI_WIDGETS, "run_sweep.compute",
           "None if config.simulation else history.owner_store(dataset)[0]", "history.owner_store(dataset)[0]",
           (f"{WIDT}::test_a_simulation_opens_no_store_and_a_run_is_charged_to_the_owners_as_the_page_asked",)),
    Mutant("widgets-comparison-charged-as-run", UI_WIDGETS, "run.compute",
           "charged_run(store, dataset, config, None, progress)", "False",
           (f"{WIDT}::test_a_simulation_opens_no_store_and_a_run_is_charged_to_the_owners_as_the_page_asked",), arg="comparison"),
    Mutant("widgets-run-saved-twice", UI_WIDGETS, "run.compute",
           "charged_run(store, dataset, config, None, progress)", "True",
           (f"{WIDT}::test_a_simulation_opens_no_store_and_a_run_is_charged_to_the_owners_as_the_page_asked",), arg="save"),
    Mutant("widgets-upload-key-shared-across-sessions", UI_WIDGETS, "load_upload_job",
           r"h.update(b'\0' + _session_token().encode() + b'\0' + str(filename).encode())", "pass",
           (f"{WIDT}::test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes",)),
    Mutant("widgets-upload-key-without-header-flag", UI_WIDGETS, "load_upload_job", "bytes([headerless])", "b''",
           (f"{WIDT}::test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes",)),
    Mutant("widgets-upload-key-without-attributes", UI_WIDGETS, "load_upload_job", "attributes is not None", "False",
           (f"{WIDT}::test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes",), nth=0),
    Mutant("widgets-upload-key-without-attribute-column", UI_WIDGETS, "load_upload_job",
           "str(attributes['user_col']).encode()", "b''",
           (f"{WIDT}::test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes",)),
    Mutant("widgets-session-token-new-every-call", UI_WIDGETS, "_session_token",
           "st.session_state.get('_upload_owner')", "None",
           (f"{WIDT}::test_an_uploads_cache_key_is_its_sessions_and_holds_its_name_options_header_and_attributes",)),
    Mutant("widgets-upload-estimate-without-attributes", UI_WIDGETS, "load_upload_job",
           "len(data) + (len(attributes['data']) if attributes is not None else 0)", "len(data)",
           (f"{WIDT}::test_an_uploads_time_estimate_counts_both_files_at_the_measured_speed",)),
    Mutant("widgets-upload-estimate-no-second", UI_WIDGETS, "load_upload_job",
           "1.0 + size / (UPLOAD_MB_PER_S * 1e6)", "size / (UPLOAD_MB_PER_S * 1e6)",
           (f"{WIDT}::test_an_uploads_time_estimate_counts_both_files_at_the_measured_speed",)),
    Mutant("widgets-new-data-keeps-old-run", UI_WIDGETS, "set_dataset",
           "(RUN, COMPARISON, SWEEP, CONFIG, 'audit_result')", "(COMPARISON, SWEEP, CONFIG, 'audit_result')",
           (f"{WIDT}::test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them",)),
    Mutant("widgets-new-data-keeps-audit-choices", UI_WIDGETS, "set_dataset", "forget('audit_')", "pass",
           (f"{WIDT}::test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them",)),
    Mutant("widgets-new-data-keeps-federate-choices", UI_WIDGETS, "set_dataset", "forget('fed_')", "pass",
           (f"{WIDT}::test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them",)),
    Mutant("widgets-same-data-clears-everything", UI_WIDGETS, "set_dataset",
           "st.session_state.get(DATASET_KEY) != key", "True",
           (f"{WIDT}::test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them",)),
    Mutant("widgets-cli-flags-of-old-data", UI_WIDGETS, "set_dataset", "st.session_state[DATA_CLI] = cli", "pass",
           (f"{WIDT}::test_new_data_clears_the_old_datas_results_and_choices_and_the_same_data_keeps_them",)),
    Mutant("widgets-sidebar-private-said-not", UI_WIDGETS, "sidebar_status",
           "not p.get('private')", "p.get('private')",
           (f"{WIDT}::test_the_sidebar_states_the_last_runs_spend_and_says_a_simulation",)),
    Mutant("widgets-sidebar-simulation-unsaid", UI_WIDGETS, "sidebar_status",
           "' · *simulation: noise reproducible, no privacy claim*' if cfg.simulation else ''", "''",
           (f"{WIDT}::test_the_sidebar_states_the_last_runs_spend_and_says_a_simulation",)),
    Mutant("widgets-owner-key-of-old-data", UI_WIDGETS, "owner_key",
           "memo and memo[0] == st.session_state.get(DATASET_KEY)", "memo",
           (f"{WIDT}::test_the_owner_key_is_recomputed_when_the_data_changes",)),
    Mutant("widgets-simulation-result-kept", UI_WIDGETS, "record",
           "doc['odometer'].get('store', '') is None", "False",
           (f"{WIDT}::test_a_result_of_a_simulation_that_opened_no_store_is_not_kept_and_a_store_failure_is_a_warning",)),
    Mutant("widgets-record-without-data-crashes", UI_WIDGETS, "record", "ds is None", "False",
           (f"{WIDT}::test_a_result_of_a_simulation_that_opened_no_store_is_not_kept_and_a_store_failure_is_a_warning",)),
    Mutant("widgets-default-overwrites-value", UI_WIDGETS, "widget_default", "key not in st.session_state", "True",
           (f"{WIDT}::test_a_widget_gets_its_remembered_value_its_default_or_keeps_what_it_holds",)),
    Mutant("widgets-default-ignores-memory", UI_WIDGETS, "widget_default", "store.get(key, default)", "default",
           (f"{WIDT}::test_a_widget_gets_its_remembered_value_its_default_or_keeps_what_it_holds",)),
    Mutant("widgets-forget-keeps-widget-values", UI_WIDGETS, "forget", "del st.session_state[k]", "pass",
           (f"{WIDT}::test_a_widget_gets_its_remembered_value_its_default_or_keeps_what_it_holds",)),
    Mutant("widgets-forget-keeps-memory", UI_WIDGETS, "forget", "del store[k]", "pass",
           (f"{WIDT}::test_a_widget_gets_its_remembered_value_its_default_or_keeps_what_it_holds",)),
    Mutant("widgets-upload-not-kept", UI_WIDGETS, "kept_upload",
           "st.session_state[store] = (up.name, up.getvalue())", "pass",
           (f"{WIDT}::test_an_upload_is_kept_for_the_session_until_it_is_forgotten",)),
    Mutant("widgets-failed-job-is-cached-run", UI_WIDGETS, "is_cached_run", "job.error is None", "True",
           (f"{WIDT}::test_only_a_finished_job_without_an_error_is_a_cached_run",)),
    Mutant("widgets-running-job-is-cached-run", UI_WIDGETS, "is_cached_run", "job.done", "True",
           (f"{WIDT}::test_only_a_finished_job_without_an_error_is_a_cached_run",)),
    # secure sums, Shamir shares, wire format and what a deployment node and the server do
    # a real SecAgg+ sum with one node killed: the only test that reaches the survivors' count (a Flower
    # deployment, ~1 min)
    Mutant("secure-sum-needs-every-entity", SERVER, "_SecureSum.__call__",
           "survivors = H - int(method.max_dropouts)", "survivors = H",
           ("tests/test_deployment.py::test_a_node_killed_in_a_secure_sum_within_max_dropouts_completes_and_beyond_stops"
            "[lost before its share]",)),
    # the secure sum with nodes lost at every step, in one process (Flower's own node code)
    Mutant("secagg-unmask-asks-for-a-never-dealt-key", SERVER, "_dropout_safe_secaggplus.share_keys_stage",
           "state.sampled_node_ids = dealt", "state.sampled_node_ids = state.sampled_node_ids",
           (f"{SECAGG_DROP}::test_within_the_threshold_the_sum_is_exactly_the_contributors_values",)),
    Mutant("secagg-removes-a-mask-that-was-never-added", SERVER, "_dropout_safe_secaggplus.share_keys_stage",
           "set(nb) & dealt", "set(nb)",
           (f"{SECAGG_DROP}::test_within_the_threshold_the_sum_is_exactly_the_contributors_values",)),
    Mutant("secagg-subclass-on-another-flower", SERVER, "_dropout_safe_secaggplus",
           "not (fi.usable('secaggplus-share-keys') and fi.usable('secaggplus-unmask'))", "False",
           (f"{SECAGG_DROP}::test_another_flowers_workflow_runs_as_it_is_and_says_what_that_means",)),
    Mutant("reply-pull-unbounded", SERVER, "bound_reply_pulls.bounded_pull_objects",
           "min(float(kwargs.get('max_time') or bound), bound)", "kwargs.get('max_time')",
           (f"{APPS}::test_a_replys_objects_are_pulled_for_at_most_the_round_timeout",)),
    Mutant("reply-objects-wait-past-the-step-deadline", SERVER, "reply_objects_bound",
           "min(max_time, max(end - time.monotonic(), 0.0) + min(REPLY_OBJECTS_GRACE, max_time))", "max_time",
           (f"{APPS}::test_a_replys_objects_are_pulled_no_later_than_the_steps_deadline_and_a_grace",)),
    Mutant("reply-objects-no-grace-at-the-deadline", SERVER, "reply_objects_bound",
           "min(REPLY_OBJECTS_GRACE, max_time)", "0.0",
           (f"{APPS}::test_a_replys_objects_are_pulled_no_later_than_the_steps_deadline_and_a_grace",)),
    Mutant("lost-node-reply-counted-as-a-failure", SERVER, "_Transport._collect",
           "m.has_error() and m.error.code in LOST_NODE_ERRORS", "False",
           (f"{APPS}::test_a_reply_that_says_its_node_is_gone_counts_as_no_reply",)),
    Mutant("failed-node-reply-dropped", SERVER, "_Transport._collect",
           "m.has_error() and m.error.code in LOST_NODE_ERRORS", "m.has_error()",
           (f"{APPS}::test_a_reply_that_says_its_node_is_gone_counts_as_no_reply",)),
    Mutant("replies-stored-during-a-stalled-pull-dropped", SERVER, "_Transport._collect",
           "began < end", "False",
           (f"{APPS}::test_replies_stored_while_a_pull_waits_out_a_half_uploaded_reply_still_count",)),
    Mutant("secure-sum-refusal-hides-the-silent-nodes", SERVER, "_SecureSum.__call__",
           "m.metadata.dst_node_id not in answered", "False",
           (f"{APPS}::test_a_secure_sum_that_stops_on_silent_nodes_names_them_the_step_and_the_timeout_flag",)),
    Mutant("round2-loss-stops-the-run", SERVER, "_Run.exchange", "max(left, 0)", "0", (LOST_AFTER,)),
    Mutant("round2-loss-beyond-max-dropouts-tolerated", SERVER, "_Run.exchange",
           "int(self.config.max_dropouts) - len(self.dropped)", "int(self.config.max_dropouts)", (LOST_AFTER,)),
    Mutant("round2-loss-not-recorded", SERVER, "_Run.lose", "self.dropped[n] = name", "pass", (LOST_AFTER,)),
    Mutant("serverapp-interrupt-unreported", SERVER, "main",
           "run.transport.progress('error')", "None",
           (f"{APPS}::test_a_serverapp_interrupted_by_flowers_heartbeat_says_so_before_it_exits",), nth=2),
    Mutant("progress-half-line-parsed", "dpfed_core/deployment/launcher.py", "ProgressFile.read",
           "text[:text.rfind('\\n') + 1]", "text",
           (f"{APPS}::test_the_progress_file_is_read_a_whole_line_at_a_time",)),
    Mutant("wire-minus-infinity-sent-as-infinity", WIRE, "dumps.fix",
           "'inf' if v > 0 else '-inf'", "'inf'", (WIRE_JSON,)),
    Mutant("wire-nan-sent-as-non-json-nan", WIRE, "dumps.fix",
           "return None", "return v", (WIRE_JSON,)),
    Mutant("wire-minus-infinity-read-back-as-a-string", WIRE, "loads.fix",
           "v == '-inf'", "False", (WIRE_JSON,)),
    Mutant("wire-infinity-in-a-list-read-back-as-a-string", WIRE, "loads.fix",
           "[fix(x) for x in v]", "v", (WIRE_JSON,)),
    Mutant("run-json-states-a-selected-catalogues-size", WIRE, "run_json",
           "catalogue_size is not None and item_catalogue == 'declared'", "catalogue_size is not None", (RUN_JSON,)),
    Mutant("run-json-accepts-an-unknown-catalogue", WIRE, "run_json",
           "item_catalogue not in CATALOGUES", "False", (RUN_JSON,)),
    Mutant("run-json-without-a-catalogue-read-as-selected", WIRE, "catalogue_from_json",
           "loads(text).get(CATALOGUE_FIELD, 'declared')", "'secure'", (RUN_JSON,), arg=1),
    Mutant("public-arrays-unpickled", WIRE, "unpack_arrays",
           "np.load(io.BytesIO(bytes(data)), allow_pickle=False)", "True",
           (f"{WIRET}::test_packed_public_arrays_come_back_as_sent_and_an_object_array_is_refused",), arg="allow_pickle"),
    Mutant("audit-run-combines-the-last-sum", SPROT, "run_stages",
           "stage != stages[-1] or final_combine", "True", (STAGE_SUMS,)),
    Mutant("stage-public-not-what-the-entities-saw", SPROT, "run_stages",
           "out[stage, 'public'] = public", "out[stage, 'public'] = dict(public, n_entities=-1)", (STAGE_SUMS,)),
    Mutant("stage-shares-kept-when-told-not-to", SPROT, "run_stages",
           "keep_shares", "True", (STAGE_SUMS,)),
    Mutant("all-cores-means-one-thread", SPROT, "_workers",
           "min(tasks, os.cpu_count() or 1) if n_jobs == -1 else min(tasks, max(int(n_jobs), 1))",
           "min(tasks, max(int(n_jobs), 1))",
           (THREADED,)),
    Mutant("threaded-shares-yielded-out-of-order", SPROT, "_in_order",
           "h >= workers", "h > workers", (THREADED,)),
    Mutant("threaded-share-ledger-without-earlier-rows", SPROT, "_shares.staged",
           "own.spend(**asdict(row))", "pass", (THREADED,)),
    # a process that forms the sum itself draws its noise once
    Mutant("sum-noise-drawn-at-one-shares-scale", "dpfed_core/privacy/noise.py", "SumNoise.gaussian",
           "float(scale) * math.sqrt(self.n_shares)", "float(scale)", (ONCE_SCALE,)),
    Mutant("sum-noise-shares-keep-their-exact-values", "dpfed_core/privacy/noise.py", "SumNoise.gaussian",
           "np.zeros(v.shape)", "v.copy()", (ONCE_BITS,), nth=1),
    Mutant("sum-noise-shares-of-another-shape-accepted", "dpfed_core/privacy/noise.py", "SumNoise.gaussian",
           "(seen['shape'], seen['scale']) != (v.shape, float(scale))", "False", (ONCE_REFUSED,)),
    Mutant("sum-noise-one-share-too-many-accepted", "dpfed_core/privacy/noise.py", "SumNoise.gaussian",
           "seen['shares'] >= self.n_shares", "False", (ONCE_REFUSED,)),
    Mutant("sum-noise-release-never-drawn-accepted", "dpfed_core/privacy/noise.py", "SumNoise.check_complete",
           "seen['shares'] != self.n_shares", "False", (ONCE_REFUSED,)),
    Mutant("noise-drawn-once-in-simulation", SPROT, "noise_drawn_once",
           "not any((is_simulation(r) for r in rngs))", "len(rngs) > 0", (ONCE_SCALE,)),
    Mutant("noise-drawn-once-without-secure-aggregation", SPROT, "noise_drawn_once",
           "method.aggregation == 'secure'", "True", (ONCE_SCALE,)),
    Mutant("noise-drawn-once-for-a-plug-in-that-does-not-say-so", SPROT, "noise_drawn_once",
           "bool(getattr(method, 'noise_drawn_for_the_sum', False))", "True",
           (f"{SUMNOISE}::test_a_plug_in_that_does_not_say_so_keeps_a_draw_per_share",)),
    Mutant("catalogue-noise-once-drawn-per-share", CAT, "select_catalogue_secure",
           "pooled_streams(rngs[:len(slices)])", "list(rngs)",
           (f"{SUMNOISE}::test_the_catalogue_of_a_run_that_draws_once_draws_its_histogram_once",)),
    Mutant("run-catalogue-drawn-per-share-in-production", CATRUN, "_fit_on_secure_catalogue",
           "draws_noise_once(config.method)", "False", (ONCE_CATALOGUE,)),
    Mutant("pooled-run-records-share-rounding", CATRUN, "_on_catalogue", "rounding_key(trust)", "'rounding'",
           (ONCE_CATALOGUE,)),
    Mutant("threaded-share-rows-not-spent-on-the-run", SPROT, "_shares",
           "ledgers[h].ledger.spend(**asdict(row))", "pass", (THREADED,)),
    Mutant("broadcast-carries-the-servers-own-quantities", SPROT, "broadcast_between_stages",
           "{k: np.asarray(public[k]) for k in method.public_keys if k in public}",
           "{k: np.asarray(v) for k, v in public.items()}",
           (STAGE_SUMS, MESSAGE_LOG)),
    Mutant("coalition-guarantee-of-the-strongest-share", SPROT, "trust_record",
           "max(coalition_epsilons, default=math.inf)", "min(coalition_epsilons, default=math.inf)", (TRUST,)),
    Mutant("coalition-guarantee-without-secure-sum", SPROT, "trust_record",
           "coal if secure else eps", "coal", (TRUST,)),
    Mutant("dropouts-stated-without-secure-sum", SPROT, "trust_record",
           "int(method.max_dropouts) if secure else 0", "int(method.max_dropouts)", (TRUST,)),
    Mutant("notes-claim-a-secure-sum-without-one", SPROT, "run_notes", "NO_SECAGG_NOTE", "IN_PROCESS_NOTE", (TRUST,)),
    # each share rounded before the secure sum: the bound that covers it, and the warning where it does not
    Mutant("rounding-alias-bound-4x-too-optimistic", SUMM, "rounding_log_eta", "0.5 * pt2", "2.0 * pt2",
           (f"{ROUNDING}::test_the_rounded_sum_is_within_eta_of_a_post_processing_of_the_gaussian_sum",)),
    Mutant("rounding-window-without-the-uniforms", SUMM, "rounding_covered", "c + (H / 2.0 + a) / s", "c",
           (f"{ROUNDING}::test_coverage_needs_more_noise_steps_at_a_larger_epsilon_and_more_entities",)),
    Mutant("rounding-tails-without-e-to-the-epsilon", SUMM, "rounding_covered",
           "math.log(slack * delta) - epsilon - math.log(4.0 * M)", "math.log(slack * delta) - math.log(4.0 * M)",
           (f"{ROUNDING}::test_coverage_needs_more_noise_steps_at_a_larger_epsilon_and_more_entities",)),
    Mutant("rounding-grid-steps-ignore-the-off-diagonal", SUMM, "share_grid_steps",
           "spread(r.stage)", "1.0", (ROUNDING_RUN,)),
    Mutant("rounding-steps-forget-the-catalogues-shares", CATRUN, "_on_catalogue",
           "[r for r in ledger.rows if r.stage == 'catalogue']", "[]", (ROUNDING_CATALOGUE,)),
    Mutant("cooccurrence-off-diagonal-spread-unstated", SUMM, "DPCooccurrence.noise_spread",
           "1.0 / math.sqrt(2.0) if stage == 'co-occurrence' else 1.0", "1.0", (ROUNDING_RUN,)),
    Mutant("als-off-diagonal-spread-unstated", ALS, "DPALS.noise_spread",
           "1.0 / math.sqrt(2.0) if stage.startswith('als-') else 1.0", "1.0", (ROUNDING_RUN,)),
    Mutant("simulation-on-records-said-to-release-exact-data", "dpfed_core/evaluation/budget.py", "planned_charge",
           "any((SIMULATION_ON_REAL_DATA in (q.note or '') for q in plans))", "False",
           ("tests/test_odometer.py::test_a_simulation_on_real_data_is_no_back_door",)),
    Mutant("rounding-as-deployed-never-warned", SPROT, "rounding_warning",
           "key == 'rounding_as_deployed'", "False", ("tests/test_sum_noise.py::test_a_run_that_drew_each_sum_once_warns_when_a_deployment_of_it_would_not_be_covered",)),
    Mutant("rounding-as-deployed-recorded-as-this-runs", SPROT, "rounding_key",
           "'rounding_as_deployed' if trust.get('noise') else 'rounding'", "'rounding'", ("tests/test_sum_noise.py::test_a_run_that_drew_each_sum_once_warns_when_a_deployment_of_it_would_not_be_covered",)),
    Mutant("rounding-warning-never-given", SPROT, "rounding_warning", "rounding.get('covered', True)", "True",
           (ROUNDING_RUN,)),
    Mutant("rounding-warning-epsilon-rounded-to-nearest", SPROT, "rounding_warning",
           "epsilon_that_holds(trust['against_server']['epsilon'])", "f\"{trust['against_server']['epsilon']:.4g}\"",
           ("tests/test_sum_noise.py::test_a_run_that_drew_each_sum_once_warns_when_a_deployment_of_it_would_not_be_"
            "covered",)),
    Mutant("coalition-refusal-epsilon-rounded-to-nearest", SITE, "check",
           "epsilon_that_holds(req.coalition_epsilon)", "f'{req.coalition_epsilon:.4g}'", (COALITION_PLAN,)),
    Mutant("rounding-coverage-judged-at-epsilon-one", SPROT, "rounding_record",
           "rounding_covered(grid_steps, n_entities, epsilon, delta)",
           "rounding_covered(grid_steps, n_entities, min(epsilon, 1.0), delta)", (ROUNDING_RUN,)),
    Mutant("sweep-forgets-its-unproved-points", VERDICTS, "unproved_epsilons",
           "((r.get('privacy') or {}).get('rounding') or {}).get('covered') is False", "False",
           (f"{ROUNDING}::test_a_sweep_names_the_points_whose_epsilon_is_not_proved",)),
    Mutant("sweep-point-keeps-no-rounding-record", EXPERIMENTS, "sweep",
           "k in ('rounding', 'rounding_as_deployed', 'noise')", "k in ('rounding_as_deployed', 'noise')",
           (f"{ROUNDING}::test_a_sweep_names_the_points_whose_epsilon_is_not_proved",)),
    Mutant("report-hides-a-sweeps-unproved-points", RSECTIONS, "_tradeoff", "unproved_sweep_text(sweep)", "None",
           (f"{ROUNDING}::test_the_report_states_a_sweeps_unproved_points_to_analysts_and_the_public",)),
    Mutant("cli-drops-the-guarantees-warnings", CLI_MAIN, "print_run_statement",
           "doc['privacy'].get('warnings') or []", "[]",
           (f"{ROUNDING}::test_the_cli_prints_the_guarantees_warnings_as_the_dashboard_shows_them",)),
    Mutant("message-log-broadcast-after-the-last-stage", SPROT, "fit_summable.on_event",
           "stage != stages[-1]", "True", (MESSAGE_LOG,)),
    Mutant("message-log-v-in-round-one", SPROT, "fit_summable",
           "array_message(2, SERVER, name, f'item factors V ({method.name})', V)", "1", (MESSAGE_LOG,), arg=0),
    Mutant("message-log-share-words-swapped", SPROT, "fit_summable.on_event",
           "f'share of the secure sum ({stage} + noise share)' if secure else f'noisy {release_words(stage)} (full noise)'",
           "f'noisy {release_words(stage)} (full noise)' if secure else f'share of the secure sum ({stage} + noise share)'",
           (MESSAGE_LOG,)),
    Mutant("negative-dropouts-accepted", SUMM, "SummableMethod.check",
           "d < 0", "d < -1", (f"{SUMT}::test_max_dropouts_is_a_whole_number_of_at_least_zero",)),
    Mutant("boolean-dropouts-of-a-method-accepted", SUMM, "SummableMethod.check",
           "isinstance(d, bool)", "False", (f"{SUMT}::test_max_dropouts_is_a_whole_number_of_at_least_zero",)),
    Mutant("stage-fused-onto-a-sum-of-unknown-length", SUMM, "fused_stages",
           "groups and known and known_before", "groups and known", (FUSED,)),
    Mutant("method-params-keep-unset-run-values", SUMM, "summable_params",
           "k in accepted and v is not None", "k in accepted",
           (f"{SUMT}::test_a_methods_run_parameters_leave_out_what_the_run_does_not_set",)),
    Mutant("node-release-seconds-of-the-last-stage-only", CLIENT, "_remember_seconds",
           "before + seconds", "seconds", (f"{APPS}::test_a_nodes_release_seconds_add_up_over_the_stages_of_a_run",)),
    Mutant("node-catalogue-keys-overwritten-by-a-stage", CLIENT, "_store_public",
           "CATALOGUE_KEY if after == CATALOGUE_STAGE else PUBLIC_KEY", "PUBLIC_KEY",
           (f"{APPS}::test_the_released_catalogue_keys_outlive_a_later_stages_public_result",)),
    Mutant("site-log-delta-nan", CLIENT, "_log_release",
           "r.delta == r.delta", "True", (SITE_LOG,)),
    Mutant("site-log-rho-of-some-rows", CLIENT, "_log_release",
           "rhos and len(rhos) == len(rows)", "rhos", (SITE_LOG,)),
    Mutant("node-share-beyond-secagg-range-sent", CLIENT, "_secure_share",
           "peak > clip", "peak > 2 * clip",
           (f"{APPS}::test_a_share_entry_beyond_secaggs_range_is_refused_not_clipped",)),
    Mutant("node-later-stage-without-its-public-input", CLIENT, "_secure_share",
           "group[0] != method.stages[0] and k not in public", "False",
           (f"{APPS}::test_a_later_stages_share_is_refused_before_the_previous_stages_public_result_arrives",)),
    Mutant("server-ignores-a-silent-node", SERVER, "_Transport.check_replies",
           "len(missing) > tolerate", "False", (REPLIES,)),
    Mutant("server-forgets-which-node-was-silent", SERVER, "_Transport.check_replies",
           "return missing", "return []", (REPLIES,)),
    Mutant("server-refuses-replies-after-a-dropout", SERVER, "_Run.identify",
           "len(by_index) + len(self.dropped) != self.n_entities", "len(by_index) != self.n_entities",
           (f"{APPS}::test_the_server_orders_replies_by_entity_and_counts_a_dropped_entity_as_present",)),
    Mutant("server-splits-a-fused-sum-of-the-wrong-length", SERVER, "_SecureSum.fused_lengths",
           "sum(lengths) != size", "False", (FUSED_SPLIT,)),
    Mutant("server-accepts-other-inputs-fixed-ahead", SERVER, "_SecureSum.check_ahead",
           "key not in public or not np.array_equal(np.asarray(public[key]), np.asarray(value))", "key not in public",
           (FUSED_SPLIT,)),
    Mutant("node-reports-its-tasks-run-time", NODE_RT, "run_supernode", "fi.usable('node-timing')", "False",
           (f"{NODET}::test_a_node_reports_no_run_time_of_its_tasks_to_the_superlink",)),
    Mutant("node-flag-with-equals-ignored", NODE_RT, "_flag_value",
           "a.startswith(flag + '=')", "False", (FLAGS,)),
    Mutant("node-flag-at-the-end-crashes", NODE_RT, "_flag_value",
           "i + 1 < len(argv)", "i < len(argv)", (FLAGS,)),
    Mutant("zygote-warms-prototype-libraries-for-a-summable-run", NODE_RT, "warm_modules",
           "return WARM_MODULES", "return WARM_MODULES + PROTOTYPE_WARM_MODULES",
           (f"{NODET}::test_a_summable_runs_zygote_warms_without_the_prototype_methods_libraries",)),
    Mutant("node-idle-poll-never-backs-off", NODE_RT, "_Clock.sleep",
           "self.pause = min(self.pause * 2.0, self.cap)", "self.pause = min(self.pause, self.cap)", (IDLE_POLL,)),
    Mutant("node-with-doorbell-polls-fast", NODE_RT, "_Clock.__init__",
           "self.cap if doorbell is not None else IDLE_POLL_MIN", "IDLE_POLL_MIN", (IDLE_POLL,)),
    Mutant("node-reply-check-waits-half-a-second", NODE_RT, "_Clock.sleep",
           "time.sleep(0.005)", "time.sleep(seconds)", (IDLE_POLL,)),
    Mutant("node-idle-poll-not-reset-by-a-message", NODE_RT, "_Clock.activity",
           "self.pause = self.floor", "pass", (IDLE_POLL,)),
    # a node's next ClientApp task read the SecAgg+ state from before its last task had saved it
    Mutant("node-next-task-started-before-the-last-saved-its-state", NODE_RT, "fork_executor.ForkExecutor.launch",
           "spec.task_type == TaskType.CLIENT_APP", "False", (TASK_ORDER,)),
    Mutant("node-task-launched-untracked", NODE_RT, "fork_executor.ForkExecutor.launch",
           "self.children[pid] = spec.task_type", "pass", (TASK_ORDER,)),
    Mutant("node-clientapp-task-waits-for-the-serverapp", NODE_RT, "fork_executor.ForkExecutor._await_earlier",
           "task_type not in self.children.values()", "not self.children", (TASK_ORDER,)),
    Mutant("node-waits-forever-for-a-task-that-hangs", NODE_RT, "fork_executor.ForkExecutor._await_earlier",
           "time.monotonic() >= deadline", "False", (TASK_ORDER,)),
    Mutant("simulation-without-a-site-policy-accepted", DEPLOYED, "check_site_policy",
           "config.simulation", "False", (SIM_POLICY,), nth=0),
    Mutant("simulation-under-a-policy-refusing-it-accepted", DEPLOYED, "check_site_policy",
           "config.simulation and not policy.allow_simulation", "False", (SIM_POLICY,)),
    Mutant("one-entity-deployment-accepted", DEPLOYED, "check_deployable",
           "dataset.n_entities < 2", "dataset.n_entities < 1", (DEPLOYABLE,)),
    Mutant("dropouts-accepted-for-a-prototype-method", DEPLOYED, "check_deployable",
           "config.max_dropouts and config.method not in SUMMABLE_METHODS", "False", (DEPLOYABLE,)),
    Mutant("another-runs-local-report-read", DEPLOYED, "read_local_reports",
           "int(rep.get('run_id', -1)) != int(run_id)", "False", (REPORTS,)),
    Mutant("dropped-entitys-report-required", DEPLOYED, "read_local_reports",
           "name in skip", "False", (REPORTS,)),
    # the DP prototypes, the summable servers, the mechanisms and the accountant, beyond the releases audited above
    Mutant("mech-infinite-sensitivity-accepted", MECH, "_check_sensitivity",
           "not math.isfinite(sensitivity) or sensitivity < 0", "sensitivity < 0", (INF_SENS,)),
    Mutant("laplace-calibrated-for-one-coordinate", MECH, "laplace_mechanism",
           "laplace_scale(sensitivity, epsilon, values.size)", "1",
           (f"{MECHT}::test_the_laplace_mechanism_calibrates_to_the_rounding_of_the_whole_vector",), arg=2),
    Mutant("count-scale-ignores-sensitivity", MECH, "count_mechanism", "sensitivity / epsilon", "1 / epsilon",
           (f"{MECHT}::test_the_count_mechanisms_scale_is_its_sensitivity_over_epsilon",)),
    Mutant("gaussian-row-rho-of-one-coordinate", MECH, "gaussian_mechanism", "max(values.size, 1)", "1",
           (f"{MECHT}::test_a_gaussian_rows_rho_is_opendps_map_at_the_vectors_own_size",)),
    Mutant("top-s-of-every-coordinate-refused", MECH, "gumbel_top_s", "1 <= s <= m", "1 <= s < m",
           (f"{MECHT}::test_top_s_may_select_every_coordinate",)),
    Mutant("partition-keep-exact-strict", MECH, "partition_keep", "c >= gamma", "c > gamma", (EXACT_KEEP,)),
    Mutant("selection-exact-strict", MECH, "partition_selection", "c >= threshold", "c > threshold", (EXACT_KEEP,)),
    Mutant("selection-beyond-the-callers-delta-drawn", MECH, "partition_selection",
           "float(delta_map) > float(delta) * (1 + 1e-09)", "False",
           (f"{MECHT}::test_partition_selection_refuses_a_threshold_its_delta_does_not_cover_before_any_draw",)),
    Mutant("selection-noisy-strict", MECH, "partition_selection",
           "sampler_for(rng).discrete_laplace(c, scale) >= threshold",
           "sampler_for(rng).discrete_laplace(c, scale) > threshold",
           (f"{MECHT}::test_partition_selection_keeps_a_key_when_count_plus_noise_reaches_the_threshold",)),
    Mutant("partition-threshold-delta-range-widened", MECH, "partition_threshold", "0 < delta_per_test < 0.5",
           "0 < delta_per_test < 1",
           (f"{MECHT}::test_the_partition_threshold_refuses_a_delta_per_level_outside_its_range",)),
    Mutant("partition-threshold-rounding-unguarded", MECH, "partition_threshold",
           "while q ** (gamma - 1) / (1 + q) > delta_per_test:\n    gamma += 1", "pass",
           (f"{MECHT}::test_the_partition_threshold_is_the_smallest_gamma_whose_single_user_cube_stays_within_delta",)),
    Mutant("classic-sigma-factor-2-dropped", MECH, "gaussian_sigma_classic", "2 * math.log(1.25 / delta)",
           "math.log(1.25 / delta)", (f"{MECHT}::test_the_classic_gaussian_calibration_is_the_textbook_formula",)),
    Mutant("rho-margin-dropped", ACC, "rho_of_gaussian", "(1.0 + RHO_MARGIN)", "1.0", (GAUSS_RHO,)),
    Mutant("rho-of-no-noise-divides-by-zero", ACC, "rho_of_gaussian", "sigma <= 0", "sigma < 0", (GAUSS_RHO,)),
    Mutant("pure-rho-epsilon-squared", ACC, "rho_of_pure", "0.5 * float(epsilon) ** 2", "float(epsilon) ** 2",
           (f"{ACCT}::test_the_rho_of_a_pure_release_is_half_its_epsilon_squared",)),
    Mutant("ledger-selection-counted-gaussian", ACC, "ledger_rho", "gaussian_only and 'gaussian' in mech",
           "gaussian_only", (ROWS_RHO,)),
    Mutant("ledger-approximate-row-as-pure", ACC, "ledger_rho", "dlt == 0.0", "True",
           (f"{ACCT}::test_an_approximate_row_without_rho_leaves_the_rows_without_a_rho",)),
    Mutant("batch-large-points-epsilon-dropped", ACC, "compose_releases",
           "batch_pld_epsilon([m.rho for m in gauss], room - d_rest) + sum((m.epsilon for m in rest))",
           "batch_pld_epsilon([m.rho for m in gauss], room - d_rest)", (BATCH_TWO,)),
    Mutant("batch-of-two-not-pld", ACC, "compose_releases", "len(gauss) > 1", "len(gauss) > 2", (BATCH_TWO,)),
    Mutant("batch-pld-takes-large-points", ACC, "compose_releases",
           "m.gaussian and m.rho is not None and (m.rho <= PLD_MAX_RHO)", "m.gaussian and m.rho is not None",
           (BATCH_TWO,), nth=0),
    Mutant("batch-rho-from-some-points", ACC, "compose_releases", "all((m.rho is not None for m in members))",
           "any((m.rho is not None for m in members))",
           (f"{ACCT}::test_a_batch_with_a_point_without_rho_has_no_zcdp_charge",)),
    Mutant("split-may-miss-a-stage", BSPLIT, "BudgetSplit.check_stages", "set(stages) != set(self.stages)",
           "not set(self.stages) <= set(stages)", (f"{BST}::test_a_split_must_name_exactly_the_methods_stages",)),
    Mutant("stage-share-coalition-without-divisor", SUMM, "SummableMethod.gaussian_share",
           "plan.coalition_epsilon(divisor)", "plan.coalition_epsilon(1.0)",
           (f"{BST}::test_a_multi_stage_share_states_the_coalition_epsilon_of_its_own_noise_shares",)),
    Mutant("trust-text-in-process-swapped", STMT, "trust_model_text", "t.get('in_process')",
           "not t.get('in_process')", (TRUST_TEXT,)),
    Mutant("trust-text-coalition-delta-dropped", STMT, "trust_model_text", "_num(against.get('delta'))", "'—'",
           (TRUST_TEXT,)),
    Mutant("entity-from-data-unsaid", STMT, "entity_assumptions", "[*out, ENTITY_FROM_DATA]", "out",
           (f"{PLT}::test_an_entity_list_read_from_the_data_is_stated_as_unprotected_membership",)),
    Mutant("secure-sum-refuses-tolerated-dropouts", SUMM, "SummableMethod.check_participants",
           "n_participants < n_entities - self.max_dropouts", "n_participants < n_entities",
           (f"{SUMT}::test_a_secure_sum_releases_with_up_to_max_dropouts_missing_and_refuses_more",)),
    Mutant("coalition-epsilon-rounded-down", SUMM, "coalition_epsilon", "return hi", "return lo",
           (f"{SUMT}::test_the_coalition_epsilon_is_rounded_up_to_meet_delta_by_opendps_map",)),
    Mutant("popularity-row-norm-ignored", SUMM, "DPPopularity._bound",
           "self.value_max if self.row_norm is None else self.row_norm", "self.value_max", (POP_BOUND,)),
    Mutant("popularity-public-row-bound-is-the-value-bound", SUMM, "DPPopularity.public_bounds", "self._bound()",
           "float(self.value_max)", (f"{PUBLIC_BOUNDS}[dp-popularity-given]",)),
    Mutant("prototypes-public-value-min-always-zero", DPP, "DPPrototypes.public_bounds", "float(value_min)", "0.0",
           (f"{PUBLIC_BOUNDS}[dp-gaussian-given]", f"{PUBLIC_BOUNDS}[dp-prototypes-given]")),
    Mutant("prototypes-parameter-check-skips-the-release-checks", DPP, "DPPrototypes.check_parameters",
           "self._validate(_no_rows(n_items), '')", "None",
           ("tests/test_method_contract.py::test_a_prototype_methods_parameter_check_refuses_what_its_release_refuses_"
            "before_any_row",)),
    Mutant("popularity-entries-not-clipped", SUMM, "DPPopularity.share",
           "np.clip(Xc.data, 0.0, self.value_max, out=Xc.data)", "pass", (POP_BOUND,)),
    Mutant("popularity-broadcast-negative", SUMM, "DPPopularity.finish",
           "np.maximum(np.asarray(total, dtype=np.float64), 0.0)", "np.asarray(total, dtype=np.float64)",
           (f"{COT}::test_dp_popularitys_broadcast_is_the_noisy_sum_clipped_at_zero",)),
    Mutant("noise-edge-without-factor-2", SUMM, "DPCooccurrence.combine", "math.sqrt(2.0 * M)", "math.sqrt(M)",
           (NOISE_EDGE,)),
    Mutant("noise-edge-ignores-participants", SUMM, "DPCooccurrence.combine", "math.sqrt(n_participants)", "1.0",
           (NOISE_EDGE,)),
    Mutant("popularity-column-not-unit", SUMM, "DPCooccurrence.combine",
           "g = g / max(float(np.linalg.norm(g)), 1e-300)", "pass", (NOISE_EDGE,)),
    Mutant("cooccurrence-share-keeps-weights", SUMM, "DPCooccurrence.share", "to_grid(noisy / weight)",
           "to_grid(noisy)",
           (f"{COT}::test_a_cooccurrence_share_is_the_packed_matrix_itself_not_its_weighted_vector",)),
    Mutant("pop-share-one-accepted", SUMM, "DPCooccurrence.check", "0 < self.pop_share < 1",
           "0 < self.pop_share <= 1", (COOC_LIMITS,)),
    Mutant("max-items-one-accepted", SUMM, "DPCooccurrence.check", "self.max_items < 2", "self.max_items < 1",
           (COOC_LIMITS,)),
    Mutant("fused-after-unsized-stage", SUMM, "fused_stages", "groups and known and known_before",
           "groups and known",
           (f"{SUMT}::test_a_stage_joins_the_previous_sum_only_when_that_stage_states_its_length_too",)),
    Mutant("grid-rounds-down", SUMM, "to_grid", "np.round(np.asarray(values, dtype=np.float64) / GRID)",
           "np.floor(np.asarray(values, dtype=np.float64) / GRID)",
           (f"{SUMT}::test_shares_are_rounded_to_the_nearest_grid_point",)),
    Mutant("trial-loss-not-clipped", PMECH, "clipped_loss", "np.minimum(d.min(1), cap)", "d.min(1)",
           (f"{DPPT}::test_the_clipped_loss_counts_each_user_at_most_the_cap",)),
    Mutant("gaussian-threshold-without-sigma", PMECH, "recover_gaussian", "threshold * sigma", "threshold",
           (GAUSS_RECOVERY,)),
    Mutant("gaussian-top-s-signed", PMECH, "recover_gaussian", "np.argpartition(-np.abs(P), s - 1, axis=1)",
           "np.argpartition(-P, s - 1, axis=1)", (GAUSS_RECOVERY,)),
    Mutant("shifted-grid-levels-off-by-one", PMECH, "private_partition", "a if g == 0 else a - 1", "a",
           (f"{DPPT}::test_every_grid_of_the_private_partition_reports_levels_by_cube_side",)),
    Mutant("projection-dim-not-half-log", DPP, "default_projection_dim", "0.5 * math.log(max(n_hat, 2.0))",
           "math.log(max(n_hat, 2.0))", (PROJ_DIM,)),
    Mutant("projection-dim-floor-two", DPP, "default_projection_dim",
           "np.clip(round(0.5 * math.log(max(n_hat, 2.0))), 3, 10)",
           "np.clip(round(0.5 * math.log(max(n_hat, 2.0))), 2, 10)", (PROJ_DIM,)),
    Mutant("gaussian-support-capped-at-64", DPP, "DPPrototypes._bounds", "m if self.variant == 'gaussian' else s_ref",
           "s_ref", (f"{DPPT}::test_the_gaussian_variant_keeps_every_coordinate_by_default_and_the_paper_variant_64",)),
    Mutant("negative-threshold-accepted", DPP, "DPPrototypes._validate", "self.threshold >= 0", "True",
           (f"{DPPT}::test_a_negative_threshold_or_no_delta_for_the_candidates_is_refused_by_name",)),
    Mutant("zero-delta-candidates-accepted", DPP, "DPPrototypes._validate", "0 < dc <= 1", "0 <= dc <= 1",
           (f"{DPPT}::test_a_negative_threshold_or_no_delta_for_the_candidates_is_refused_by_name",)),
    Mutant("one-cluster-keeps-a-trial-choice-share", DPP, "DPPrototypes._stage_shares", "self.trials == 1 or k == 1",
           "self.trials == 1", (f"{DPPT}::test_one_cluster_with_several_trials_spends_nothing_on_a_trial_choice",)),
    Mutant("recovery-bound-ignores-negative-entries", DPP, "DPPrototypes._recover", "max(abs(vmin), abs(vmax))",
           "vmax", ("tests/test_dp_prototypes.py::test_the_paper_recoverys_support_is_selected_at_the_sensitivity_of_"
                    "one_coordinate",)),
    Mutant("recovery-support-beyond-the-catalogue", DPP, "DPPrototypes._recover", "s = min(s, m)", "pass",
           (f"{DPPT}::test_a_support_beyond_the_catalogue_is_every_coordinate_at_the_catalogues_sensitivity",)),
    Mutant("refinement-sums-delta-not-shared", DPP, "DPPrototypes._release",
           "delta * (1 - dc) / T_r / (R + 1) * (1 - 1e-12)", "delta * (1 - dc) / T_r * (1 - 1e-12)",
           (f"{DPPT}::test_refinements_of_the_gaussian_variant_share_the_sums_delta",)),
    Mutant("non-private-cubes-of-one-user", DPP, "DPPrototypes._release", "max(1.0, n / (4.0 * k))", "1.0",
           (f"{DPPT}::test_the_non_private_limit_keeps_cubes_of_at_least_n_over_4k_users",)),
    Mutant("lsh-branch-at-the-keep-threshold", DPP, "DPPrototypes._release_lsh", "coresets.BRANCH_FACTOR * min_node",
           "min_node", (LSH_THRESHOLDS,)),
    Mutant("lsh-cap-without-k", DPP, "DPPrototypes._release_lsh", "float(self.lsh_node_cap) * k",
           "float(self.lsh_node_cap)", (LSH_THRESHOLDS,)),
    Mutant("lsh-centres-not-clipped", DPP, "DPPrototypes._release_lsh", "P = np.clip(centres, vmin, vmax)",
           "P = centres", (f"{CORET}::test_the_coresets_centres_are_released_within_the_public_value_bounds",)),
    Mutant("lloyd-steps-share-w-over-r-squared", DPP, "lsh_lloyd_split", "(f'lloyd sums {r + 1}', w, R)",
           "(f'lloyd sums {r + 1}', w / R, R)",
           (f"{CORET}::test_the_lloyd_split_gives_the_leaf_sums_one_minus_w_and_each_step_w_over_r",)),
    Mutant("leaf-threshold-below-one", CORE, "leaf_threshold",
           "max(1.0, node_factor * math.sqrt(m) * sigma / radius)", "node_factor * math.sqrt(m) * sigma / radius",
           (LEAF_THRESHOLD,)),
    Mutant("leaf-threshold-m-not-root-m", CORE, "leaf_threshold", "math.sqrt(m)", "m", (LEAF_THRESHOLD,)),
    Mutant("simhash-zero-row-all-ones", CORE, "_hash_bits", "proj < 0", "proj <= 0",
           (f"{CORET}::test_a_zero_row_hashes_to_zeros_and_a_negative_projection_to_one",)),
    Mutant("lsh-branch-strict", CORE, "build_lsh_tree", "node_cnt >= min_branch", "node_cnt > min_branch",
           (AT_THRESHOLD,)),
    Mutant("lsh-keep-strict", CORE, "build_lsh_tree", "keep = noisy >= min_node", "keep = noisy > min_node",
           (AT_THRESHOLD,)),
    Mutant("james-stein-m-not-m-minus-2", CORE, "james_stein", "(m - 2) * v", "m * v", (JAMES_STEIN,)),
    Mutant("james-stein-not-positive-part", CORE, "james_stein",
           "np.maximum(0.0, 1.0 - (m - 2) * v / np.maximum(norm2, 1e-300))",
           "1.0 - (m - 2) * v / np.maximum(norm2, 1e-300)", (JAMES_STEIN,)),
    Mutant("james-stein-below-three-coordinates", CORE, "james_stein", "sigma <= 0 or m < 3", "sigma <= 0",
           (JAMES_STEIN,)),
    Mutant("leaf-points-outside-the-ball", CORE, "noisy_leaf_averages",
           "pts = pts * np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]", "pass", (LEAF_BALL,)),
    Mutant("coreset-weights-negative", CORE, "lsh_tree_coreset", "np.maximum(tree.counts, 0.0)", "tree.counts",
           (LEAF_BALL,)),
    Mutant("kmeans-negative-weights-kept", CORE, "weighted_kmeans",
           "np.maximum(np.asarray(weights, dtype=np.float64), 0.0)", "np.asarray(weights, dtype=np.float64)",
           (f"{CORET}::test_weighted_kmeans_ignores_negative_weights_and_pads_with_the_heaviest_centre",)),
    # budget edges the tests above left open: a batch's δ, a non-private row's ρ, the cap's δ and its
    # slack, settlements, withdrawals, a re-export's spend, the selection's threshold, a two-entity coalition,
    # a worker or thread that draws before the run's budget has accepted its row, a run settled crosswise
    # people of several accounts in one table: each account checked and charged
    Mutant("padded-table-escapes-the-other-accounts-cap", ODO, "BudgetOdometer.reserve",
           "self._also_held(con, key, dataset, secret, ident.account, found) if charged and secret else []",
           "[]",
           (f"{FPT}::test_people_padded_with_others_are_checked_against_their_own_cap_and_charged_to_it",)),
    Mutant("padded-table-dry-run-sees-one-account", ODO, "BudgetOdometer.preview",
           "self._also_held(con, key, dataset, secret, ident.account) if secret is not None else []", "[]",
           (f"{FPT}::test_people_padded_with_others_are_checked_against_their_own_cap_and_charged_to_it",)),
    Mutant("other-accounts-charge-not-withdrawn", BREC, "Reservation.__post_init__",
           "set(self.release_ids) | set(self.extra_ids)", "set(self.release_ids)",
           (f"{FPT}::test_a_withdrawn_reservation_gives_back_every_accounts_charge",)),
    Mutant("cap-of-delta-zero-accepted", ODO, "BudgetOdometer.set_cap", "delta == 0 and math.isfinite(epsilon)",
           "False", (f"{ODOT}::test_a_cap_of_delta_zero_is_refused_not_shown_as_pure_and_enforced_at_another_delta",)),
    Mutant("gaussian-run-at-delta-zero-not-named", BUDGET, "check_gaussian_delta",
           "zcdp and delta <= 0 and math.isfinite(epsilon)", "False",
           ("tests/test_budget_delta_refusal.py::test_a_gaussian_method_at_delta_zero_is_refused_naming_delta_not_epsilon",)),
    Mutant("pld-batch-takes-the-others-delta", ACC, "compose_releases",
           "(half - fixed) / len(eligible) if eligible else 0.0", "half",
           (f"{ACCT}::test_a_batch_leaves_the_other_releases_their_delta",)),
    Mutant("pld-batches-do-not-share-the-delta", ACC, "compose_releases",
           "(half - fixed) / len(eligible) if eligible else 0.0", "half - fixed",
           (f"{ACCT}::test_two_batches_compose_basically_and_singles_add",)),
    Mutant("pld-batch-rest-delta-not-subtracted", ACC, "compose_releases",
           "batch_pld_epsilon([m.rho for m in gauss], room - d_rest)", "room",
           (f"{ACCT}::test_the_pld_of_a_batch_leaves_its_large_points_delta_to_them",), arg=1),
    Mutant("ledger-rho-skips-a-non-private-row", ACC, "ledger_rho", "return (None, False)", "continue",
           (f"{ACCT}::test_a_row_with_an_infinite_epsilon_leaves_the_rows_without_a_rho",), nth=0),
    Mutant("cap-delta-raise-unconfirmed", ODO, "BudgetOdometer.set_cap",
           "epsilon > old_e * (1 + CAP_REL_TOL) or delta > old_d * (1 + CAP_REL_TOL)",
           "epsilon > old_e * (1 + CAP_REL_TOL)",
           (f"{ODOT}::test_raising_only_the_caps_delta_needs_confirmation_too",)),
    Mutant("settle-missing-rho-is-zero", BREC, "Reservation.settle", "rho.get(e, (None, False))",
           "rho.get(e, (0.0, True))",
           (f"{ODOT}::test_a_settled_charge_whose_ledger_gave_no_rho_composes_by_its_epsilon_only",)),
    Mutant("withdraw-after-one-draw", BREC, "Reservation.withdraw", "int(draws) != 0", "int(draws) > 1",
           (f"{BREL}::test_withdraw_is_refused_once_anything_was_drawn_or_settled",)),
    Mutant("withdraw-on-a-negative-row-count", BREC, "Reservation.withdraw", "int(draws) != 0", "int(draws) > 0",
           (f"{BREL}::test_withdraw_is_refused_once_anything_was_drawn_or_settled",)),
    # a reservation with one release settled (it drew) gives nothing back, not even its other releases
    Mutant("withdraw-after-a-release-was-settled", BREC, "Reservation.withdraw",
           "set(self._open) != set(self.release_ids) | set(self.extra_ids)", "not self._open",
           (f"{BREL}::test_withdraw_is_refused_once_anything_was_drawn_or_settled",)),
    Mutant("catalogue-threshold-one-below", CAT, "select_catalogue",
           "mech.partition_selection(counts[present], int(max_items), epsilon, delta, 1 + k, rng)", "k",
           (f"{SCAT}::test_the_per_entity_selection_rows_state_the_map_at_the_threshold_the_release_reports",),
           arg=4),
    Mutant("odometer-cap-one-percent-slack", ODO, "BudgetOdometer._check",
           "after.epsilon > cap_e * (1 + CAP_REL_TOL)", "after.epsilon > cap_e * 1.01",
           (f"{ODOT}::test_a_release_past_the_cap_by_a_hair_is_refused",)),
    Mutant("check-composes-a-runs-releases-as-a-batch", ODO, "BudgetOdometer._plan_entries",
           "batch_id if p.batch else None", "batch_id",
           (f"{ODOT}::test_a_run_and_its_comparison_are_checked_as_they_will_be_charged_not_as_a_batch",)),
    Mutant("secure-catalogue-coalition-ignores-a-small-divisor", CAT, "secure_catalogue_share",
           "zcdp_epsilon(rho * divisor * divisor, delta) if divisor > 1 else eps_row",
           "zcdp_epsilon(rho * divisor * divisor, delta) if divisor > 2 else eps_row",
           (f"{ACCT}::test_the_federation_wide_catalogues_coalition_epsilon",)),
    Mutant("ledger-delta-of-one-in-a-hundred-accepted", LEDGER, "validate_budget", "delta >= DELTA_MAX",
           "delta > DELTA_MAX", (f"{LEDGERT}::test_bad_budgets",)),
    Mutant("cap-delta-of-one-in-a-hundred-accepted", ODO, "BudgetOdometer.set_cap", "not 0 <= delta < 0.01",
           "not 0 <= delta <= 0.01", (f"{ODOT}::test_delta_cap_enforced",)),
    Mutant("zero-noise-gaussian-rho-zero", MECH, "gaussian_mechanism",
           "gaussian_float_rho(float(sigma), float(sensitivity), max(values.size, 1)) if sigma > 0 else math.inf",
           "gaussian_float_rho(float(sigma), float(sensitivity), max(values.size, 1)) if sigma > 0 else 0.0",
           (f"{MECHT}::test_a_gaussian_given_no_noise_at_a_finite_epsilon_records_an_infinite_rho",)),
    Mutant("account-ignores-its-re-exports", ODO, "BudgetOdometer._group",
           "[account, *(r[0] for r in con.execute('SELECT key FROM datasets WHERE alias_of = ?', (account,)))]",
           "[account]", (f"{ODOT}::test_what_a_reexport_spent_binds_the_original_dataset_too",)),
    Mutant("worker-ledger-unbounded", PROTO, "release_entity", "PrivacyLedger(epsilon, delta)",
           "PrivacyLedger(math.inf)",
           (f"{DPPT}::test_a_worker_release_is_refused_within_the_runs_budget_before_any_noise_is_drawn",)),
    Mutant("threaded-share-ledger-unbounded", SPROT, "_shares.staged",
           "PrivacyLedger(ledgers[h].epsilon, ledgers[h].delta)", "PrivacyLedger(math.inf)",
           (f"{SUMT}::test_a_share_made_in_a_thread_is_refused_before_its_noise_is_drawn",)),
    Mutant("settle-run-docs-reversed", BUDGET, "settle_run", "zip(reservation.plans, docs)",
           "zip(reservation.plans, reversed(docs))",
           (f"{ODOT}::test_each_release_of_a_run_is_settled_from_its_own_ledger",)),
    # what the dashboard helpers, the report and the operator commands show
    Mutant("ui-eps-max-exclusive", UI_INPUTS, "check_budget",
           "math.isfinite(eps) and eps > MAX_FINITE_EPSILON",
           "math.isfinite(eps) and eps >= MAX_FINITE_EPSILON", (TYPED_INPUTS,)),
    Mutant("ui-grid-unsorted", UI_INPUTS, "parse_grid",
           "sorted(check_grid(values, 'epsilons'))", "check_grid(values, 'epsilons')", (TYPED_INPUTS,)),
    Mutant("resume-with-other-points-accepted", EXPERIMENTS, "_resumable_runs", "old_v != new_v", "False",
           ("tests/test_intake.py::test_sweep_resume_after_a_kill",)),
    Mutant("audit-grid-past-a-runs-range-charged", "dpfed_core/audit/membership.py", "check_audit_options",
           "check_epsilon(e, param='epsilons')", "None",
           ("tests/test_page_audit.py::test_an_audit_grid_past_a_runs_range_is_refused_before_it_is_planned_or_"
            "charged",)),
    Mutant("audit-one-user-entity-charged-before-refused", "dpfed_core/audit/targets.py", "check_target_users",
           "check_entity_size(int(sl.stop - sl.start), specs, name)", "None",
           (f"{CLIT}::test_a_real_target_of_a_one_user_entity_is_refused_before_anything_is_charged",)),
    Mutant("sweep-refusal-names-the-runs-epsilon", ODO, "_check",
           "any((p.kind == 'sweep point' for p in plans))", "False",
           (f"{ODOT}::test_cap_enforced_and_refusal_names_the_control",)),
    Mutant("ui-leading-marker-unescaped", UI_INPUTS, "escape_md", "re.sub(r'^([-+=>])')", "s", (LIST_ITEM_NAME,)),
    Mutant("ui-leading-number-unescaped", UI_INPUTS, "escape_md", "re.sub(r'^(\\d+)([.)])')", "s", (LIST_ITEM_NAME,)),
    Mutant("ui-param-hint-dropped", UI_INPUTS, "friendly_message",
           "param and param in CONTROL_NAMES and CONTROL_NAMES[param] not in text", "False", (PARAM_CONTROL,)),
    Mutant("ui-fraction-not-capped", UI_JOBS, "fraction_of",
           "min(1.0, float(info['done']) / float(info['total']))",
           "float(info['done']) / float(info['total'])", (JOB_PROGRESS,)),
    Mutant("ui-fraction-moves-back", UI_JOBS, "Job.progress", "max(self.fraction, frac)", "frac", (JOB_PROGRESS,)),
    Mutant("ui-seconds-left-inverted", UI_JOBS, "Job.seconds_left",
           "self.elapsed * (1.0 - self.fraction) / self.fraction",
           "self.elapsed * self.fraction / (1.0 - self.fraction)", (JOB_PROGRESS,)),
    Mutant("ui-failed-job-kept", UI_JOBS, "JobCache.submit", "self._jobs.get(key) is job", "False", (JOB_CACHE,)),
    Mutant("ui-running-job-evicted", UI_JOBS, "JobCache.submit", "not old.done", "False", (JOB_CACHE,)),
    Mutant("ui-lru-not-refreshed-on-get", UI_JOBS, "JobCache.get", "self._jobs.move_to_end(key)", "None", (JOB_CACHE,)),
    Mutant("ui-entity-word-inside-its-noise", UI_TABLES, "entity_against_alone",
           "abs(float(f) - float(b)) <= ENTITY_Z * se[k]", "False",
           (f"{DASHT}::test_the_recommend_banner_gives_no_word_inside_the_entitys_own_paired_noise",)),
    Mutant("ui-entity-spread-not-paired", UI_TABLES, "entity_paired_spread",
           "x - d * den", "x",
           (f"{DASHT}::test_the_paired_spread_of_an_entity_is_the_ratio_estimators_over_its_test_users",)),
    Mutant("ui-reason-without-earlier-spend", BUDGET, "spend_reason",
           "requested is not None and spend < requested * 0.995 and already > 0",
           "requested is not None and spend < requested * 0.995", (SPEND_REASON,)),
    Mutant("ui-requested-of-several-plans", BUDGET, "spend_reason",
           "max(asked) if len(asked) == 1 else None", "max(asked) if asked else None", (SPEND_REASON,)),
    Mutant("ui-minus-inf-not-restored", UI_HISTORY, "_restore_inf",
           "obj in ('inf', '-inf')", "obj == 'inf'", (STORED_INFINITIES,)),
    Mutant("ui-delete-other-owner", UI_HISTORY, "delete",
           "owned is None", "False", (OTHER_OWNER_DELETE,)),
    Mutant("ui-progress-keys-called-items", UI_TABLES, "progress_text",
           "'shared keys' if info.get('keys') else 'items'", "'items'",
           ("tests/test_dashboard_engine.py::test_each_protocol_event_reads_as_a_sentence_counting_entities_from_one",)),
    Mutant("summable-v-on-keys-reported-as-items", SPROT, "fit_summable",
           "shared is not None and not shared.public", "False",
           ("tests/test_dashboard_engine.py::test_a_run_on_a_dp_catalogue_says_its_server_fits_shared_keys",)),
    Mutant("ui-progress-index-from-zero", UI_TABLES, "progress_text",
           "info['index'] + 1", "info['index']", (EVENT_WORDS,)),
    Mutant("ui-per-stage-delta-is-epsilon", UI_TABLES, "per_stage_table",
           "per.get(e, {}).get('delta', math.nan)", "per.get(e, {}).get('epsilon', math.nan)", (LEDGER_TAB,)),
    Mutant("ui-top-columns-by-row", UI_TABLES, "top_columns",
           "np.abs(np.asarray(P)).sum(axis=0)", "np.abs(np.asarray(P)).sum(axis=1)", (LEDGER_TAB,)),
    Mutant("ui-top-columns-smallest", UI_TABLES, "top_columns",
           "np.argsort(-mass, kind='stable')", "np.argsort(mass, kind='stable')", (LEDGER_TAB,)),
    Mutant("ui-factor-items-smallest", UI_TABLES, "top_items_per_factor",
           "np.argsort(-V[:, f], kind='stable')", "np.argsort(V[:, f], kind='stable')", (PAGE_TABLES,)),
    Mutant("ui-cli-placeholder-set-as-a-value", UI_INPUTS, "_control_set_to",
           "re.fullmatch('[A-Z][A-Z0-9_]*', value)", "None",
           ("tests/test_dashboard_engine.py::test_a_placeholder_the_engine_writes_for_the_cli_is_the_control_alone_on_the_page",)),
    Mutant("ui-factor-items-beyond-the-items", UI_TABLES, "top_items_per_factor",
           "n = min(n, V.shape[0])", "n = n",
           ("tests/test_dashboard_engine.py::test_the_broadcast_factors_of_a_dp_catalogue_are_shown_on_the_items_of_each_key",)),
    Mutant("ui-broadcast-key-rows-under-item-names", UI_ENGINE, "broadcast_factors",
           "item_key is not None", "False",
           ("tests/test_dashboard_engine.py::test_the_broadcast_factors_of_a_dp_catalogue_are_shown_on_the_items_of_each_key",)),
    Mutant("ui-factor-numbered-from-zero", UI_TABLES, "top_items_per_factor",
           "f'factor {f + 1}'", "f'factor {f}'", (PAGE_TABLES,)),
    Mutant("ui-flat-scores-absolute", UI_TABLES, "cannot_rank",
           "FLAT_SCORES * max(1.0, float(np.abs(s).max()))", "FLAT_SCORES", (PAGE_TABLES,)),
    Mutant("ui-test-users-last", UI_TABLES, "entity_users", "first + rest", "rest + first", (PAGE_TABLES,)),
    Mutant("ui-cluster-sizes-never-sent", UI_TABLES, "prototype_summary",
           "'yes' if name in sent_sizes else 'no'", "'no'", (PAGE_TABLES,)),
    Mutant("ui-settings-k-for-every-method", "dpfed_core/evaluation/defaults.py", "settings_line",
           "spec is not None and spec.uses_k", "True", (SETTINGS_LINE,)),
    Mutant("ui-settings-eps-for-non-private", "dpfed_core/evaluation/defaults.py", "settings_line",
           "spec is None or spec.uses_epsilon", "True", (SETTINGS_LINE,)),
    # the pages' tables and sentences: what a reader takes as the run's numbers and words — a non-private run
    # given a guarantee, an entity's users or test users reaching into the next entity, a spread of the wrong
    # sd, a verdict withheld at the evidence rule or hidden by a measure inside its noise, a download that is
    # not strict JSON, a headline, a message shape or an evidence count not as stated
    Mutant("ui-observed-headline-every-ranking-metric", UI_TABLES, "headline_metrics", "ranking[:2]", "ranking",
           (HEADLINE,)),
    Mutant("ui-message-shapes-raw", UI_TABLES, "messages_table", "df['shape'] = df['shape'].map(shape_text)", "pass",
           (HEADLINE,)),
    Mutant("ui-non-private-run-given-a-guarantee", UI_TABLES, "guarantee_text", "not p['private']", "False",
           (NOT_PRIVATE,)),
    Mutant("ui-metrics-table-without-overall", UI_TABLES, "metrics_frame", "[*doc['entities'], doc['overall']]",
           "doc['entities']", (METRICS_TABLE,)),
    Mutant("ui-clinical-name-case-sensitive", UI_TABLES, "is_clinical", "str(ds.name).lower()", "str(ds.name)",
           (CLINICAL,)),
    Mutant("ui-infinite-scores-make-a-ranking", UI_TABLES, "cannot_rank", "s = s[np.isfinite(s)]", "pass",
           (NOT_FINITE,)),
    Mutant("ui-evidence-one-neighbour-more", UI_TABLES, "similar_evidence", "int(k)", "int(k) + 1", (K_NEAREST,)),
    Mutant("ui-featured-items-unknown-to-a-site", UI_TABLES, "names_known_to", "ds.item_features is not None",
           "False", (FEATURED_KNOWN,)),
    Mutant("ui-unshared-ellipsis-at-eight", UI_TABLES, "unshared_items_notes", "len(unshared) > 8",
           "len(unshared) >= 8", (UNSHARED_EIGHT,)),
    Mutant("ui-entity-users-reach-the-next-entity", UI_TABLES, "entity_users", "sl.start <= i < sl.stop",
           "sl.start <= i <= sl.stop", (OWN_USERS,)),
    Mutant("ui-history-smallest-values-first", UI_TABLES, "user_history", "[True, False]", "[True, True]",
           (OWN_USERS,)),
    Mutant("ui-test-users-of-the-next-entity", UI_TABLES, "entity_test_users", "sl.start <= u < sl.stop",
           "sl.start <= u <= sl.stop", (OWN_USERS,)),
    Mutant("ui-set-metrics-poisoned-by-undefined-users", UI_TABLES, "entity_set_metrics", "np.nanmean(out[k])",
           "np.mean(out[k])", (EVENT_SPREAD,)),
    Mutant("ui-pr-auc-spread-population-sd", UI_TABLES, "entity_paired_spread", "np.std(diff, ddof=1)",
           "np.std(diff)", (EVENT_SPREAD,)),
    Mutant("ui-spread-of-one-test-user", UI_TABLES, "entity_paired_spread", "users.size < 2", "users.size < 1",
           (EVENT_SPREAD,)),
    Mutant("ui-banner-no-word-at-the-evidence-rule", UI_TABLES, "entity_standing_banner",
           "n_test < MIN_EVIDENCE_USERS", "n_test <= MIN_EVIDENCE_USERS", (BANNER_WORD,)),
    Mutant("ui-banner-noise-hides-a-worse-measure", UI_TABLES, "entity_standing_banner",
           "cmp.get('noise') and (not cmp['worse']) and (not cmp['better'])",
           "cmp.get('noise') and (not cmp['better'])", (BANNER_WORD,)),
    Mutant("ui-download-not-strict-json", UI_TABLES, "document_json", "json_safe(shareable_document(doc))",
           "shareable_document(doc)", (STRICT_DOWNLOAD,)),
    Mutant("ui-stored-run-shows-nan", UI_TABLES, "stored_run_summary", "math.isfinite(o[k])", "True",
           (STRICT_DOWNLOAD,)),
    Mutant("ui-stored-run-markdown-unescaped", UI_TABLES, "stored_run_summary",
           "escape_md(f'{method}, {where}: {label}' + (f' — {metrics}' if metrics else ''))",
           "f'{method}, {where}: {label}' + (f' — {metrics}' if metrics else '')", (STRICT_DOWNLOAD,)),
    Mutant("ui-broadcast-without-its-receivers", UI_TABLES, "progress_text",
           "f\"Round 2 · server broadcasts V to {info.get('receivers', '?')} entities\"",
           "'Round 2 · server broadcasts V'", (COUNTS_AND_COLUMNS,)),
    Mutant("ui-server-prototypes-uncounted", UI_TABLES, "progress_text", "info.get('n_prototypes', '?')", "'?'",
           (COUNTS_AND_COLUMNS,)),
    Mutant("ui-empty-ledger-without-columns", UI_TABLES, "ledger_table",
           "pd.DataFrame(columns=['entity', 'stage', 'mechanism', 'epsilon', 'delta', 'sensitivity', 'noise_scale', "
           "'note'])", "df", (COUNTS_AND_COLUMNS,)),
    Mutant("ui-broadcast-columns-from-zero", UI_TABLES, "broadcast_column_names", "f'column {c + 1}'", "f'column {c}'",
           (COUNTS_AND_COLUMNS,)),
    Mutant("ui-few-test-users-rule-misstated", UI_TABLES, "few_test_users_text", "MIN_EVIDENCE_USERS",
           "MIN_EVIDENCE_USERS - 1", (COUNTS_AND_COLUMNS,)),
    Mutant("ui-no-test-users-hint-misstated", UI_TABLES, "entity_standing_banner", "n_hidden", "n_hidden + 1",
           (COUNTS_AND_COLUMNS,), nth=0),
    Mutant("ui-download-drops-the-odometers-figures", UI_TABLES, "shareable_document",
           "{**odo, 'store': PurePath(str(odo['store'])).name}", "{'store': PurePath(str(odo['store'])).name}",
           (ODOMETER_FIGURES,)),
    Mutant("ui-evidence-for-a-user-without-training-rows", UI_TABLES, "similar_evidence", "mine == 0", "False",
           (ODOMETER_FIGURES,)),
    # the one starting configuration of both front ends and the command line that reproduces a run: a setting
    # not the measurement's (or not its stated constant without it), ε spent by a method that spends none, a
    # measured method this registry lacks, a sweep in the wrong mode, a flag the run used left out or one it
    # did not use written in
    Mutant("defaults-file-without-defaults-read", EVAL_DEFAULTS, "measured_defaults",
           "doc if doc and isinstance(doc.get('defaults'), dict) else None", "doc", (DEFAULT_RUN,)),
    Mutant("defaults-measured-infinity-read-as-one", EVAL_DEFAULTS, "_epsilon",
           "math.inf if value in ('inf', None) else float(value)", "1.0 if value in ('inf', None) else float(value)",
           (DEFAULT_RUN,)),
    Mutant("defaults-k-five", EVAL_DEFAULTS, MODULE, "DEFAULT_K = 10", "DEFAULT_K = 5", (DEFAULT_RUN,)),
    Mutant("defaults-unknown-measured-method-run", EVAL_DEFAULTS, "default_method",
           "measured.get('method') in available_methods()", "True", (DEFAULT_RUN,)),
    Mutant("defaults-measured-method-ignored", EVAL_DEFAULTS, "default_method",
           "measured and measured.get('method') in available_methods()", "False", (DEFAULT_RUN,)),
    Mutant("defaults-non-private-method-given-epsilon", EVAL_DEFAULTS, "default_config",
           "METHODS.get(method) is not None and METHODS[method].uses_epsilon", "True", (DEFAULT_RUN,)),
    Mutant("defaults-epsilon-ten-without-measurement", EVAL_DEFAULTS, "default_config",
           "_epsilon(measured['epsilon']) if from_file else 1.0",
           "_epsilon(measured['epsilon']) if from_file else 10.0", (DEFAULT_RUN,)),
    Mutant("defaults-measured-delta-ignored", EVAL_DEFAULTS, "default_config",
           "float(measured.get('delta', DEFAULT_DELTA)) if from_file else DEFAULT_DELTA", "DEFAULT_DELTA",
           (DEFAULT_RUN,)),
    Mutant("defaults-ridge-one", EVAL_DEFAULTS, "default_config", "RunConfig(method=method)", "1.0", (DEFAULT_RUN,),
           arg="lam"),
    Mutant("defaults-trust-note-of-a-prototype-run-says-its-own", EVAL_DEFAULTS, "trust_model_note",
           "is_summable(method)", "True", (RUN_WORDS,)),
    Mutant("defaults-rmse-sweep-in-zero-mode", EVAL_DEFAULTS, "sweep_mode",
           "mode is None and metric not in RMSE_METRICS", "mode is None", (RUN_WORDS,)),
    Mutant("defaults-sweep-overrides-a-given-mode", EVAL_DEFAULTS, "sweep_mode",
           "mode is None and metric not in RMSE_METRICS", "metric not in RMSE_METRICS", (RUN_WORDS,)),
    Mutant("defaults-observed-note-counts-undefined-methods", EVAL_DEFAULTS, "observed_ranking_note", "len(mars)",
           "len(docs)", (RUN_WORDS,)),
    Mutant("defaults-prototype-method-said-secure", EVAL_DEFAULTS, "method_words",
           "is_summable(method) and c.get('aggregation') == 'secure'", "c.get('aggregation') == 'secure'",
           (RUN_WORDS,)),
    Mutant("defaults-observed-note-without-ranking-metrics", EVAL_DEFAULTS, "observed_ranking_note",
           "any(('mar' in (d.get('overall') or {}) for d in docs.values()))", "True", (RUN_WORDS,)),
    Mutant("cli-line-without-prototype-parameters", EVAL_DEFAULTS, "cli_command",
           "{**(c.get('prototype_params') or {}), **(c.get('method_params') or {})}",
           "{**(c.get('method_params') or {})}", (COMMAND_LINE,)),
    Mutant("cli-line-epsilon-of-a-non-private-run", EVAL_DEFAULTS, "cli_command", "spec is None or spec.uses_epsilon",
           "True", (COMMAND_LINE,)),
    Mutant("cli-line-sweep-writes-the-runs-epsilon", EVAL_DEFAULTS, "cli_command", "'epsilon' not in per_point",
           "True", (COMMAND_LINE,)),
    Mutant("cli-line-sweep-writes-the-runs-seed", EVAL_DEFAULTS, "cli_command", "key not in per_point", "True",
           (COMMAND_LINE,)),
    Mutant("cli-line-without-dropouts", EVAL_DEFAULTS, "cli_command", "c.get('max_dropouts')", "False",
           (COMMAND_LINE,)),
    Mutant("cli-line-without-aggregation", EVAL_DEFAULTS, "cli_command", "is_summable(method)", "False",
           (COMMAND_LINE,)),
    Mutant("cli-line-parameter-none-as-python", EVAL_DEFAULTS, "cli_command", "'none' if value is None else value",
           "value", (COMMAND_LINE,)),
    Mutant("cli-line-switch-given-a-value", EVAL_DEFAULTS, "cli_command", "value is True", "False", (COMMAND_LINE,)),
    Mutant("cli-line-sweep-grid-of-a-non-private-run", EVAL_DEFAULTS, "sweep_command",
           "spec is None or spec.uses_epsilon", "True", (COMMAND_LINE,)),
    Mutant("ui-widget-secure-inverted", UI_DEFAULTS, "widget_state",
           "cfg.aggregation == 'secure'", "cfg.aggregation != 'secure'", (SETTINGS_LINE,)),
    Mutant("ui-data-small-entity-at-threshold", UI_DATASETS, "entity_table",
           "df['users'] < small", "df['users'] <= small", (DATA_PAGE,)),
    Mutant("ui-data-warning-more-count", UI_DATASETS, "small_entity_warning", "len(bad) - 8", "len(bad)", (DATA_PAGE,)),
    Mutant("ui-data-overview-density-per-user", UI_DATASETS, "dataset_overview",
           "max(ds.n_users * ds.n_items, 1)", "max(ds.n_users, 1)", (DATA_PAGE,)),
    Mutant("ui-data-fingerprint-ignores-bound", UI_DATASETS, "dataset_fingerprint",
           "float(ds.value_max)", "0.0", (DATA_PAGE,)),
    Mutant("ui-data-sweep-key-ignores-seeds", UI_DATASETS, "sweep_key", "list(map(int, seeds))", "[]", (DATA_PAGE,)),
    Mutant("ui-data-counts-only-event-data", UI_DATASETS, "is_event_data",
           "('counts', 'implicit')", "('counts',)", (DATA_PAGE,)),
    Mutant("report-accountant-across-dropped", RSECTIONS, "accountant_text",
           "acct.get('across_releases')", "None", (ACCOUNTANT_CHECK,), nth=0),
    Mutant("report-who-server-sees-broadcasts", RSECTIONS, "who_sees_what",
           "m.get('receiver') == 'server'", "True", (RELEASED_LOG,)),
    Mutant("report-protocol-messages-called-releases", RSECTIONS, "who_sees_what",
           "m.get('shape', []) is not None", "True",
           (f"{REPORTT}::test_a_message_with_no_array_is_said_so_and_not_counted_a_release",)),
    Mutant("report-simulation-states-a-coalition-epsilon", RSECTIONS, "coalition_text",
           "privacy.get('simulation')", "False",
           (f"{REPORTT}::test_summary_states_the_trust_model_and_the_coalition_epsilon",)),
    Mutant("report-leaves-out-the-releases-beside-the-run", REPORT_PY, "build_report",
           "other_releases(run_doc, comparison, sweep_doc, audit_doc)", "[]",
           (f"{REPORTT}::test_every_release_the_spend_counts_is_named_in_both_versions_and_a_voided_entity_is_said",)),
    Mutant("report-audit-voids-no-entity", RSECTIONS, "other_releases",
           "(names or [target]) if reads_all else [target]", "[]",
           (f"{REPORTT}::test_every_release_the_spend_counts_is_named_in_both_versions_and_a_voided_entity_is_said",)),
    Mutant("report-released-bytes-last-only", RSECTIONS, "released_from_messages",
           "g['bytes'] += int(m.get('bytes', 0))", "g['bytes'] = int(m.get('bytes', 0))", (RELEASED_LOG,)),
    Mutant("report-released-direction-swapped", RSECTIONS, "released_from_messages",
           "'entity → server' if to_server else 'server → entity'",
           "'server → entity' if to_server else 'entity → server'", (RELEASED_LOG,)),
    Mutant("report-released-non-private-unlabelled", RSECTIONS, "released_from_messages",
           "'' if private else ' — NON-PRIVATE for this method'", "''", (RELEASED_LOG,)),
    Mutant("report-k-one-prototype-below-one-cluster", RSECTIONS, "k_explanation",
           "2 * int(cluster_size)", "int(cluster_size)", (ACCOUNTANT_CHECK,)),
    Mutant("report-messages-bytes-in-counted-out", RSECTIONS, "_messages",
           "d['bytes in'] += int(mm.get('bytes', 0))", "d['bytes out'] += int(mm.get('bytes', 0))", (RELEASED_LOG,)),
    Mutant("report-within-request-ignores-delta", RSECTIONS, "_privacy",
           "_f(p.get('delta')) <= _f(p.get('requested_delta')) * (1 + 1e-09) + 1e-300", "True", (ACCOUNTANT_CHECK,)),
    Mutant("report-audit-violation-never-called", RSECTIONS, "_audit",
           "r['verdict'] == 'VIOLATION'", "False", (AUDIT_VIOLATION,), nth=0),
    Mutant("report-public-title-unmarked", REPORT_PY, "build_report",
           "' (public version)' if public else ''", "''", (AUDIT_VIOLATION,)),
    Mutant("report-dataset-summary-ignored", REPORT_PY, "build_report",
           "data_summary is None and dataset is not None", "False", (ENTITY_SUMMARY_FROM_DATASET,)),
    # the report's refusals and what it states: a sweep of other interactions, a sweep without runs, an
    # audit charged to another store, an audit given as the run, a document without its privacy or its ledger,
    # a file that is not text; comparisons given beside the run checked and their ledgers shown; the run's own
    # entity counts; the title given; the guarantee of the most-spent entity, to nine digits, the run's wrong
    # figure named first and the others counted; the session's comparisons, public version and data passed on
    Mutant("report-sweep-of-other-interactions-mixed-in", REPORT_PY, "same_data",
           "('n_users', 'n_items', 'n_entities', 'n_interactions')", "('n_users', 'n_items', 'n_entities')",
           (REPORT_REFUSALS,)),
    Mutant("report-sweep-without-runs-read", REPORT_PY, "build_report",
           "sweep_doc is not None and 'runs' not in sweep_doc", "False", (REPORT_REFUSALS,)),
    Mutant("report-audit-of-another-store-mixed-in", REPORT_PY, "build_report",
           "{'--sweep': sweep_doc, '--audit': audit_doc}", "{'--sweep': sweep_doc}", (REPORT_REFUSALS,)),
    Mutant("report-audit-given-as-the-run-not-redirected", REPORT_PY, "build_report",
           "run_doc.get('kind') in ('sweep', 'audit')", "run_doc.get('kind') in ('sweep',)", (REPORT_REFUSALS,)),
    Mutant("report-document-without-privacy-not-named", REPORT_PY, "build_report",
           "not isinstance(run_doc, dict) or 'privacy' not in run_doc or 'config' not in run_doc",
           "not isinstance(run_doc, dict) or 'config' not in run_doc", (REPORT_BAD_INPUT,)),
    Mutant("report-document-without-ledger-called-damaged", REPORT_PY, "check_stated_guarantee",
           "not isinstance(records, list)", "False", (REPORT_BAD_INPUT,)),
    Mutant("report-binary-file-raw-error", REPORT_PY, "load_doc", "(json.JSONDecodeError, UnicodeDecodeError)",
           "(json.JSONDecodeError,)",
           (f"{REPORTT}::test_a_file_that_is_not_text_is_refused_as_no_result_document",)),
    Mutant("report-comparisons-beside-the-run-unchecked", REPORT_PY, "build_report",
           "comparison if comparison is not None else run_doc.get('comparison') or {}",
           "run_doc.get('comparison') or {}", (REPORT_BESIDE,)),
    Mutant("report-runs-own-entity-counts-ignored", REPORT_PY, "build_report", "run_doc.get('entity_summary')",
           "None", (REPORT_BESIDE,)),
    Mutant("report-dp-comparison-ledger-left-out", REPORT_PY, "build_report",
           "_privacy(run_doc, include_plotlyjs, comparison)", "None",
           (f"{REPORTT}::test_a_dp_comparison_given_beside_the_run_has_its_ledger_rows_in_the_privacy_section",),
           arg=2),
    Mutant("report-title-given-ignored", REPORT_PY, "build_report",
           "title or f\"dpfed compliance report — {m.get('name', run_doc['config'].get('method', ''))}\" + "
           "(' (public version)' if public else '')",
           "f\"dpfed compliance report — {m.get('name', run_doc['config'].get('method', ''))}\" + "
           "(' (public version)' if public else '')",
           (f"{REPORTT}::test_the_report_states_the_title_given",)),
    Mutant("report-run-guarantee-of-the-least-spent-entity", REPORT_PY, "check_stated_guarantee",
           "max((c[0] for c in composed.values()), default=0.0)", "min((c[0] for c in composed.values()), default=0.0)",
           (f"{REPORTT}::test_the_runs_guarantee_is_that_of_its_most_spent_entity",)),
    Mutant("report-guarantee-checked-to-one-percent", REPORT_PY, "check_stated_guarantee",
           "math.isclose(x, y, rel_tol=1e-09, abs_tol=1e-15)", "math.isclose(x, y, rel_tol=0.01, abs_tol=1e-15)",
           (f"{REPORTT}::test_a_document_whose_stated_guarantee_is_not_its_ledgers_is_refused",)),
    Mutant("report-wrong-figures-not-counted", REPORT_PY, "check_stated_guarantee", "len(wrong) > 1",
           "len(wrong) > 2", (REPORT_WRONG_FIGURES,)),
    Mutant("report-last-wrong-figure-named", REPORT_PY, "check_stated_guarantee", "wrong[0]", "wrong[-1]",
           (REPORT_WRONG_FIGURES,)),
    Mutant("report-session-comparisons-unwrapped", REPORT_PY, "report_from_session",
           "comparison.get('docs', comparison) if isinstance(comparison, dict) else None", "comparison",
           (REPORT_SESSION,)),
    Mutant("report-session-public-version-dropped", REPORT_PY, "report_from_session",
           "build_report(run_doc, comparison=comp, sweep_doc=sw, audit_doc=audit, dataset=dataset, public=public)",
           "False", (REPORT_SESSION,), arg="public"),
    Mutant("report-session-dataset-dropped", REPORT_PY, "report_from_session",
           "build_report(run_doc, comparison=comp, sweep_doc=sw, audit_doc=audit, dataset=dataset, public=public)",
           "None", (REPORT_SESSION,), arg="dataset"),
    # a summable result's secure sum, which an analyst reads to check the release, left out of the result
    # the Federate page's plan per stage: a maximum, with why a stage that stops on an earlier release can
    # spend less, the k each table is for when the automatic k may use two
    Mutant("plan-caption-never-says-why-less", UI_CATALOGUE, "plan_captions",
           "{'candidates', 'local search', 'coreset sums'} & set(plan['stage'])", "False", (PLAN_AT_MOST,)),
    Mutant("plan-caption-says-early-stop-without-those-stages", UI_CATALOGUE, "plan_captions",
           "{'candidates', 'local search', 'coreset sums'} & set(plan['stage'])", "True", (PLAN_AT_MOST,)),
    Mutant("plan-caption-k-unnamed", UI_CATALOGUE, "plan_captions", "len(plans) > 1", "False",
           (PLAN_ON_PAGE,)),
    Mutant("federate-page-plan-not-shown", FED_PAGE, MODULE,
           "dash.plan_captions(method, config, dash.budget_plans(method, ds, config))", "[]", (PLAN_ON_PAGE,)),
    Mutant("plan-caption-lsh-split-called-a-bound", UI_CATALOGUE, "plan_captions",
           "getattr(_method_object(method, config), 'candidates', None) == 'lsh'", "False", (PLAN_AT_MOST,)),
    Mutant("summable-result-without-its-secure-sum", REGISTRY, "_fit_federated",
           "extra.update(trust=model.trust_, public=model.public_, secure_sum=model.secure_sum_)",
           "extra.update(trust=model.trust_, public=model.public_)",
           (f"{COT}::test_item_choice_from_the_popularity_sum",)),
    Mutant("budget-cmd-summary-names-no-one", BUDGET_CMD, "budget_summary_line",
           "f'most-spent entity {top.entity!r}'", "'every entity'", (BUDGET_COMMANDS,)),
    Mutant("budget-cmd-summary-void-dropped", BUDGET_CMD, "budget_summary_line",
           "[b.entity for b in bal if b.void]", "[]", (BUDGET_COMMANDS,)),
    Mutant("budget-cmd-withdrawn-shown-charged", BUDGET, "release_cells",
           "r['status'] == 'withdrawn'", "False", (BUDGET_COMMANDS,)),
    Mutant("budget-cmd-runs-left-without-at-least", BUDGET, "runs_left_text",
           "f'at least {n}' if n >= 200 else str(n)", "str(n)", (BUDGET_COMMANDS,)),
    Mutant("budget-cmd-list-least-spent", BUDGET_CMD, "cmd_list",
           "max(bal, key=lambda b: b.spent_epsilon) if bal else None",
           "min(bal, key=lambda b: b.spent_epsilon) if bal else None", (BUDGET_COMMANDS,)),
    Mutant("site-cmd-cap-delta-shows-remaining", SITE_CMD, "budget_line",
           "_fmt(b['cap_delta'])", "_fmt(b['remaining_delta'])", (SITE_CAP_SIM,)),
    Mutant("site-cmd-simulation-never-shown", SITE_CMD, "cmd_site",
           "'yes' if r['simulation'] else 'no'", "'no'", (SITE_CAP_SIM,)),
    Mutant("site-matching-budget-delta-one-run", SITE, "policy_matching",
           "min(2 * max(float(config.delta), 1e-12), 9e-3)",
           "min(max(float(config.delta), 1e-12), 9e-3)", (MATCHING_POLICY,)),
    Mutant("site-bounds-order-unchecked", SITE, "_checked_policy", "not bounds[0] <= bounds[1]", "False", (BAD_POLICY,)),
    Mutant("site-negative-dropouts-accepted", SITE, "_checked_policy",
           "raw.get('max_dropouts', 0) < 0", "False", (BAD_POLICY,)),
    Mutant("panel-every-site-accepted", UI_PANEL, "site_decision_text",
           "decision.get('decision') == 'accepted'", "True", (SITE_DECISION,)),
    Mutant("panel-site-policy-read-only-after-the-charge", UI_PANEL, "flower_panel",
           "check_site_policy(check_deployable(ds, config)[0], policy, ds)", "None", (PANEL_POLICY,)),
    Mutant("cli-k-note-default-cluster-size", EVAL_DEFAULTS, "prototype_method",
           "cls(k=config.k, value_max=1.0, **dict(config.prototype_params))", "cls(k=config.k, value_max=1.0)",
           (CLI_FLAG_HINT,)),
    Mutant("k-called-a-maximum-at-k-one", EVAL_DEFAULTS, "automatic_k_size", "int(config.k) <= 1", "False",
           (CLI_K_AGREE,)),
    # the Data page's path boxes showing the typed directory's file and table names
    Mutant("path-box-marked-listing-kept", UI_INPUTS, "safe_loader_message", "text.replace(part, '')", "text",
           (PATH_BOX_LISTING,)),
    Mutant("path-box-listing-ends-at-a-dot", UI_INPUTS, "safe_loader_message",
           "r'\\(?(found|contains|it has|files?)\\s*:\\s*.*?(?:\\.(?=\\s|$)|[;)]|$)'",
           "r'\\(?(found|contains|it has|files?)\\s*:\\s*[^.;)]*[.;)]?'", (PATH_BOX_LISTING,)),
    Mutant("eicu-table-names-not-marked-as-listing", EICU, "_read_eicu_table", "(listing, tables)", "(listing,)",
           (PATH_BOX_LISTING,)),
    # a direct engine call asking for 100000 workers starting that many processes
    Mutant("protocol-workers-beyond-cores", PROTO, "FederatedRecommender._map", "worker_count(self.n_jobs)",
           "self.n_jobs", ("tests/test_protocol.py::test_parallel_fits_start_no_more_workers_than_cores",)),
    # every command-line run drawing seeded, reproducible noise; settings typed on the line dropped
    Mutant("cliargs-simulation-always", CLI_ARGS, "run_config", "RunConfig()", "True", (CLI_PROD_NOISE,),
           arg="simulation"),
    Mutant("cliargs-top-n-ignored", CLI_ARGS, "run_config", "RunConfig()", "10", (CLI_PROD_NOISE,), arg="top_n"),
    Mutant("cliargs-server-weighting-ignored", CLI_ARGS, "run_config", "RunConfig()", "base.server_weighting",
           (CLI_PROD_NOISE,), arg="server_weighting"),
    Mutant("cli-k-note-its-own-rule", CLI_MAIN, "_k_note", "automatic_k_size(config)",
           "config.prototype_params.get('cluster_size', 1000.0) if config.method.startswith('dp-') else None",
           (CLI_K_AGREE,)),
    Mutant("ui-line-delta-of-least", UI_BUDGET, "budget_line", "not bal or n_rel == 0", "not bal", (SINGULAR_LINE,)),
    Mutant("ui-line-one-releases", UI_BUDGET, "budget_line", "'s' if n_rel != 1 else ''", "'s'", (SINGULAR_LINE,)),
    Mutant("tls-dns-names-dropped", SECURITY, "make_tls", "names.append(x509.DNSName(h))", "None", (SERVER_CERT,)),
    Mutant("tls-server-cert-is-a-ca", SECURITY, "make_tls",
           "x509.BasicConstraints(ca=False, path_length=None)",
           "x509.BasicConstraints(ca=True, path_length=None)", (SERVER_CERT,)),
    Mutant("tls-cert-valid-one-minute", SECURITY, "make_tls",
           "now + datetime.timedelta(days=days)", "now + datetime.timedelta(minutes=1)", (SERVER_CERT,), nth=1),
    # sweeps, result documents, run history and the comparison methods
    Mutant("exp-requested-delta-of-non-dp", EXPERIMENTS, "privacy_summary",
           "config.delta if uses_epsilon else 0.0", "config.delta",
           (f"{LABELS}::test_a_non_dp_method_requests_no_delta_and_is_never_labelled_a_simulation",)),
    Mutant("exp-simulation-label-on-non-dp", EXPERIMENTS, "privacy_summary",
           "bool(config.simulation) and uses_epsilon", "bool(config.simulation)",
           (f"{LABELS}::test_a_non_dp_method_requests_no_delta_and_is_never_labelled_a_simulation",)),
    Mutant("exp-delta-warning-largest-entity", EXPERIMENTS, "_guarantee_terms",
           "min(n_hats)", "max(n_hats)",
           (f"{LABELS}::test_the_delta_warning_reads_the_smallest_entitys_released_size",)),
    Mutant("exp-samplers-of-zero-rows", EXPERIMENTS, "_guarantee_terms",
           "math.isfinite(r.epsilon) and r.epsilon > 0", "math.isfinite(r.epsilon)",
           (f"{LABELS}::test_a_spend_the_accountant_rounds_to_zero_is_labelled_as_noisy_releases_not_as_nothing_sent",)),
    Mutant("exp-non-dp-epsilon-kept", EXPERIMENTS, "run_method",
           "config = config.replace(epsilon=math.inf)", "pass", (RUN_DOCUMENT,)),
    Mutant("exp-public-input-names-five", EXPERIMENTS, "declare_public_inputs",
           "names[:6]", "names[:5]", (PUBLIC_INPUT_ROW,)),
    Mutant("exp-public-input-count-at-six", EXPERIMENTS, "declare_public_inputs",
           "len(names) > 6", "len(names) >= 6", (PUBLIC_INPUT_ROW,)),
    Mutant("exp-public-input-non-federated", EXPERIMENTS, "declare_public_inputs",
           "spec.uses_epsilon and spec.federated", "spec.uses_epsilon", (PUBLIC_INPUT_ROW,)),
    Mutant("exp-table-population-sd", EXPERIMENTS, "sweep_table",
           "v.std(ddof=1)", "v.std(ddof=0)",
           (f"{VERDICTT}::test_the_sweep_table_is_the_mean_and_sample_sd_over_every_seed",)),
    Mutant("exp-chance-margin-dropped", EXPERIMENTS, "learned_nothing_warnings",
           "mar >= 0.5 - CHANCE_MAR_MARGIN", "mar >= 0.5",
           (f"{RUNWARN}::test_a_ranking_within_the_margin_of_chance_is_warned_and_names_epsilon_only_for_a_dp_method",)),
    Mutant("exp-chance-param-non-dp", EXPERIMENTS, "learned_nothing_warnings",
           "'epsilon' if hints and hints[0] == RAISE_EPSILON else None", "'epsilon'",
           (f"{RUNWARN}::test_a_ranking_within_the_margin_of_chance_is_warned_and_names_epsilon_only_for_a_dp_method",)),
    Mutant("exp-hints-oxford-comma-for-two", EXPERIMENTS, "_either",
           "', or ' if len(options) > 2 else ' or '", "', or '",
           (f"{RUNWARN}::test_a_chance_ranking_names_only_the_controls_that_can_lift_it",)),
    Mutant("exp-chance-raise-epsilon-at-infinity", EXPERIMENTS, "_chance_hints",
           "not spec.uses_epsilon or not math.isfinite(config.epsilon)", "not spec.uses_epsilon",
           (f"{RUNWARN}::test_a_chance_ranking_names_only_the_controls_that_can_lift_it",)),
    Mutant("exp-chance-secure-hint-when-secure", EXPERIMENTS, "_chance_hints",
           "is_summable(config.method) and config.aggregation != 'secure'", "is_summable(config.method)",
           (f"{RUNWARN}::test_a_chance_ranking_names_only_the_controls_that_can_lift_it",)),
    Mutant("exp-chance-catalogue-hint-when-declared", EXPERIMENTS, "_chance_hints",
           "if dp_catalogue:\n    hints.append('declare the item catalogue (items=FILE)')",
           "if True:\n    hints.append('declare the item catalogue (items=FILE)')",
           (f"{RUNWARN}::test_a_chance_ranking_names_only_the_controls_that_can_lift_it",)),
    Mutant("exp-empty-catalogue-own-read-off-the-columns", EXPERIMENTS, "learned_nothing_warnings",
           "keeps_own_items(spec, config)", "any((w > 0 for w in result.entity_factors().local_widths))",
           (f"{RUNWARN}::test_an_empty_catalogue_is_the_one_reason_given_for_a_chance_ranking",)),
    Mutant("exp-empty-catalogue-every-method-keeps-its-own", EXPERIMENTS, "learned_nothing_warnings",
           "keeps_own_items(spec, config)", "True",
           (f"{RUNWARN}::test_an_empty_catalogue_is_the_one_reason_given_for_a_chance_ranking",)),
    Mutant("exp-chance-after-empty-catalogue", EXPERIMENTS, "learned_nothing_warnings",
           "mar is not None and math.isfinite(mar) and (mar >= 0.5 - CHANCE_MAR_MARGIN) and (not out)",
           "mar is not None and math.isfinite(mar) and (mar >= 0.5 - CHANCE_MAR_MARGIN)",
           (f"{RUNWARN}::test_an_empty_catalogue_is_the_one_reason_given_for_a_chance_ranking",)),
    Mutant("events-table-not-told-it-can-read-implicit", LT, "_check_options",
           "', or read each user–item pair as one 1 (value_kind=implicit)' if value_col is None else ''", "''",
           ("tests/test_loaders.py::test_a_table_of_events_without_a_bound_is_told_both_ways_to_read_it",)),
    Mutant("unreadable-run-instructions-fail-the-node", CLIENT, "_instructions", "(TypeError, ValueError)", "()",
           (f"{APPS}::test_run_instructions_the_node_cannot_read_are_refused_not_a_node_failure",)),
    Mutant("unknown-run-field-said-as-a-python-argument", WIRE, "config_from_json",
           "sorted(set(d) - {f.name for f in dataclasses.fields(RunConfig)})", "[]",
           (f"{APPS}::test_run_instructions_the_node_cannot_read_are_refused_not_a_node_failure",)),
    Mutant("exp-userless-entity-given-test-user-advice", EXPERIMENTS, "learned_nothing_warnings",
           "e.get('n_users') == 0", "False",
           (f"{RUNWARN}::test_a_declared_entity_without_users_is_named_apart_without_advice_that_cannot_help_it",)),
    Mutant("exp-no-test-users-fraction-for-too-few-entries", EXPERIMENTS, "_test_user_fix",
           "[r for r in rows if eligible[r] == 0]", "[]",
           ("tests/test_run_warnings.py::test_the_fix_for_entities_without_test_users_is_the_one_their_data_allows",)),
    Mutant("exp-no-test-users-fraction-threshold", EXPERIMENTS, "_test_user_fix",
           "0.5 / int(sizes[few_users].min())", "1.0 / int(sizes[few_users].min())",
           ("tests/test_run_warnings.py::test_the_fix_for_entities_without_test_users_is_the_one_their_data_allows",)),
    Mutant("evaluate-plot-of-no-test-users", "dpfed_core/reporting/plots.py", "metric_dots", "wide.empty", "False",
           ("tests/test_dashboard_pages.py::test_evaluate_says_no_entity_has_test_users_instead_of_crashing",)),
    Mutant("exp-no-test-users-four-shown", EXPERIMENTS, "_first_five",
           "names[:5]", "names[:4]",
           (f"{RUNWARN}::test_entities_without_test_users_are_counted_and_the_first_five_named",)),
    Mutant("exp-no-test-users-more-count", EXPERIMENTS, "_first_five",
           "len(names) - 5", "len(names)",
           (f"{RUNWARN}::test_entities_without_test_users_are_counted_and_the_first_five_named",)),
    Mutant("exp-undeclared-federation-in-simulation", EXPERIMENTS, "check_declared_federation",
           "spec.uses_epsilon and math.isfinite(config.epsilon) and (not config.simulation)",
           "spec.uses_epsilon and math.isfinite(config.epsilon)", (UNDECLARED_FEDERATION,)),
    Mutant("exp-undeclared-federation-at-inf", EXPERIMENTS, "check_declared_federation",
           "spec.uses_epsilon and math.isfinite(config.epsilon) and (not config.simulation)",
           "spec.uses_epsilon and (not config.simulation)", (UNDECLARED_FEDERATION,)),
    Mutant("exp-sweep-jobs-swept-as-reference", EXPERIMENTS, "sweep_jobs",
           "if r == method:\n    continue", "pass", (SWEEP_JOBS,)),
    Mutant("exp-grid-zero-epsilon", EXPERIMENTS, "check_sweep_grid",
           "math.isnan(e) or e <= 0", "math.isnan(e) or e < 0", (SWEEP_GRID,)),
    Mutant("exp-grid-no-seeds", EXPERIMENTS, "check_sweep_grid",
           "if not seeds:\n    raise ConfigError('give at least one seed', param='seeds')", "pass", (SWEEP_GRID,)),
    Mutant("exp-sweep-swept-in-references", EXPERIMENTS, "sweep_identity",
           "[r for r in dict.fromkeys(references) if r != config.method]", "list(dict.fromkeys(references))",
           (SWEEP_CHECKPOINTS,)),
    Mutant("exp-sweep-checkpoint-complete", EXPERIMENTS, "sweep",
           "checkpoint is not None and done < total", "checkpoint is not None", (SWEEP_CHECKPOINTS,)),
    Mutant("exp-sweep-unsorted", EXPERIMENTS, "sweep",
           "doc['runs'].sort(key=lambda r: order.get(job_key(r['method'], r['epsilon'], r['seed'], config.method), 0))",
           "pass", (SWEEP_RESUMED,)),
    Mutant("exp-resume-duplicates-kept", EXPERIMENTS, "_resumable_runs",
           "key in wanted and key not in seen", "key in wanted", (SWEEP_RESUMED,)),
    Mutant("exp-resume-other-interactions", EXPERIMENTS, "_resumable_runs",
           "('name', 'n_users', 'n_items', 'n_entities', 'n_interactions', 'value_kind', 'value_max')",
           "('name', 'n_users', 'n_items', 'n_entities', 'value_kind', 'value_max')", (SWEEP_RESUMED,)),
    Mutant("exp-baseline-always-individual", EXPERIMENTS, "default_baseline",
           "'local' if 'local' in methods else 'individual'", "'individual'",
           (f"{VERDICTT}::test_the_default_baseline_is_local_when_the_sweep_ran_it_else_individual",)),
    Mutant("exp-crossing-tie-beats", EXPERIMENTS, "paired_effects",
           "'inconclusive' if not (g.size > 1 and abs(mean) > sd) else 'beats' if mean > 0 else 'worse'",
           "'beats' if mean >= 0 else 'worse'", (HIGHER_IS_BETTER_CROSSING,)),
    Mutant("exp-crossing-means-only", EXPERIMENTS, "paired_effects",
           "'inconclusive' if not (g.size > 1 and abs(mean) > sd) else 'beats' if mean > 0 else 'worse'",
           "'beats' if mean > 0 else 'worse'",
           (f"{VERDICTT}::test_a_crossing_inside_the_spread_over_seeds_is_inconclusive_and_every_line_states_the_effect",)),
    Mutant("exp-crossing-text-mode-dropped", EXPERIMENTS, "crossing_report",
           "out['text'] += f\" [{MODE_WORDS.get(mode, mode + ' mode')}]\"", "pass", (HIGHER_IS_BETTER_CROSSING,)),
    Mutant("exp-versus-strict-noise", EXPERIMENTS, "versus_dp_popularity",
           "not abs(diff) > noise", "not abs(diff) >= noise", (VERSUS_DP_POPULARITY,)),
    Mutant("exp-versus-one-seed-decides", EXPERIMENTS, "versus_dp_popularity",
           "not abs(diff) > noise", "abs(diff) <= noise", (ONE_SEED,)),
    Mutant("exp-table-one-seed-sd-zero", EXPERIMENTS, "sweep_table",
           "v.size > 1", "False", (ONE_SEED,)),
    Mutant("exp-crossing-from-one-seed", EXPERIMENTS, "crossing_report",
           "len(seeds) < 2", "len(seeds) < 1", (ONE_SEED,)),
    Mutant("verdict-one-seed-reason-twice", VERDICTS, "crossing_lines",
           "if line not in out:\n    out.append(line)", "if True:\n    out.append(line)", (ONE_SEED,)),
    Mutant("exp-versus-min-sd", EXPERIMENTS, "versus_dp_popularity",
           "max(r['sd'], ref['sd'])", "min(r['sd'], ref['sd'])", (VERSUS_DP_POPULARITY,)),
    Mutant("exp-versus-direction-ignored", EXPERIMENTS, "versus_dp_popularity",
           "if metric not in LOWER_IS_BETTER:\n    diff = -diff", "pass", (VERSUS_DP_POPULARITY,)),
    Mutant("exp-versus-difference-signed", EXPERIMENTS, "versus_dp_popularity",
           "r['mean'] - ref['mean']", "diff", (VERSUS_DP_POPULARITY,), nth=1),
    Mutant("exp-json-minus-inf", EXPERIMENTS, "json_safe",
           "'inf' if f > 0 else '-inf'", "'inf'",
           (f"{VERDICTT}::test_json_safe_writes_both_infinities_string_keys_and_python_numbers",)),
    Mutant("exp-json-int-keys", EXPERIMENTS, "json_safe",
           "{str(k): json_safe(v) for k, v in obj.items()}", "{k: json_safe(v) for k, v in obj.items()}",
           (f"{VERDICTT}::test_json_safe_writes_both_infinities_string_keys_and_python_numbers",)),
    Mutant("srv-compare-keeps-run-method", SERVICE, "execute_run",
           "[m for m in dict.fromkeys(compare) if m != config.method]", "list(dict.fromkeys(compare))",
           (COMPARED_ONCE,)),
    Mutant("srv-params-note-without-params", SERVICE, "execute_run", "config.params", "True", (COMPARED_ONCE,), nth=0),
    Mutant("srv-run-saved-unasked", SERVICE, "execute_run",
           "record.get('store') and save", "record.get('store')", (COMPARED_ONCE,)),
    Mutant("srv-compare-federation-unchecked", SERVICE, "check_run",
           "dict.fromkeys([config.method, *compare])", "[config.method]", (COMPARED_FEDERATION,)),
    Mutant("srv-vs-individual-with-one", SERVICE, "summarise_sweep",
           "{'local', 'individual'} <= refs", "{'local', 'individual'} & refs", (SWEEP_SUMMARY,)),
    Mutant("srv-vs-dp-popularity-baseline", SERVICE, "summarise_sweep",
           "crossing_report(doc, metric, 'dp-popularity')", "crossing_report(doc, metric)", (SWEEP_SUMMARY,)),
    Mutant("srv-sweep-saved-unasked", SERVICE, "execute_sweep",
           "record.get('store') and save", "record.get('store')", (SWEEP_NOT_SAVED,)),
    Mutant("his-audit-epsilon-inf", HISTORY, "RunHistory.list",
           "r['epsilon'] is None and r['kind'] == 'run'", "r['epsilon'] is None", (HISTORY_ENTRIES,)),
    Mutant("his-simulation-from-config-only", HISTORY, "_simulation",
           "bool((doc.get('config') or {}).get('simulation') or (doc.get('privacy') or {}).get('simulation'))",
           "bool((doc.get('config') or {}).get('simulation'))",
           (HISTORY_ENTRIES,)),
    Mutant("his-audit-methods-unnamed", HISTORY, "RunHistory.add",
           "cfg.get('method') or ','.join(cfg.get('methods', []) or [])", "cfg.get('method')", (HISTORY_ENTRIES,)),
    Mutant("his-delete-missing-silent", HISTORY, "RunHistory.delete",
           "if cur.rowcount == 0:\n    raise ConfigError(f'no stored result with id {entry_id} in {self.store.path}')",
           "pass", (HISTORY_ENTRIES,)),
    Mutant("his-title-sweep-grid", HISTORY, "entry_label", "doc.get('epsilons')", "cfg.get('epsilon')", (HISTORY_ENTRIES,)),
    Mutant("his-label-sweep-without-seeds", HISTORY, "entry_label", "doc.get('seeds') or []", "[]",
           ("tests/test_odometer.py::test_a_results_label_is_made_from_its_document_alone",)),
    Mutant("par-test-users-all-counted", PARTIAL, "entity_statistics",
           "int(has.sum())", "len(idx)", (ENTITY_SUMS_COMBINED,)),
    Mutant("deployed-statistics-in-zero-mode", PARTIAL, "entity_statistics",
           "_row_train_sse(train, U, V, mode)", "_row_train_sse(train, U, V, 'zero')", (ENTITY_SUMS_COMBINED,)),
    Mutant("par-recall-per-user", PARTIAL, "metrics_from_statistics",
           "ratio(stats['recall'], nt)", "ratio(stats['recall'], stats['n_users'])", (ENTITY_SUMS_COMBINED,)),
    Mutant("par-overall-from-first", PARTIAL, "combine_statistics",
           "float(sum((s[k] for _, s in per_entity)))", "float(per_entity[0][1][k])", (ENTITY_SUMS_COMBINED,)),
    Mutant("blt-popularity-unnormalised", BUILTIN, "_fit_popularity",
           "col_sum / max(train.shape[0], 1)", "col_sum", (POPULARITY,)),
    Mutant("blt-popularity-unrated-zero", BUILTIN, "_fit_popularity",
           "np.where(col_cnt > 0, col_sum / np.maximum(col_cnt, 1), glob)",
           "np.where(col_cnt > 0, col_sum / np.maximum(col_cnt, 1), 0.0)", (POPULARITY,)),
    Mutant("blt-popularity-message-reversed", BUILTIN, "_fit_popularity",
           "array_message(1, name, SERVER, 'exact item totals', col_sum)",
           "array_message(1, SERVER, name, 'exact item totals', col_sum)", (POPULARITY,)),
    Mutant("blt-central-first-entity-only", BUILTIN, "_fit_central",
           "ledger.spend(name, 'raw data', 'raw training rows (non-private)', math.inf)",
           "ledger.spend(dataset.entity_names[0], 'raw data', 'raw training rows (non-private)', math.inf)",
           (f"{CONTRACT}::test_central_states_every_entitys_raw_rows_as_non_private",)),
    Mutant("blt-random-v-one-slice", BUILTIN, "_fit_random_v",
           "U[sl] = fit_rows_given(train[sl], V, config.lam, config.mode)",
           "U[sl] = fit_rows_given(train[sl], V, 0.0, config.mode)",
           (f"{CONTRACT}::test_random_v_fits_each_users_row_on_the_drawn_items_with_the_runs_ridge",)),
    Mutant("reg-summable-uses-k", REGISTRY, "_register_federated_methods",
           "not summable", "True", (f"{CONTRACT}::test_only_prototype_methods_take_k",)),
    Mutant("reg-summable-not-site-rows", REGISTRY, "_register_federated_methods",
           "MethodSpec()", "not summable",
           (f"{CONTRACT}::test_every_federated_method_reads_the_training_data_a_sites_block_at_a_time",),
           arg="site_rows"),
    # the registry: a federated method registered without its parameters (``--param`` refused, the
    # Advanced panel empty) or found by the wrong name, a non-private method not saying raw prototypes
    # leave, a DP-selected catalogue not reaching the fit (every item shared), a run without its trust
    # record, notes, stage timings, public result or its sites' own columns, a look-up or list missing
    # the federated methods, a description not the class's, a refusal that names no choice, a
    # plug-in's registration silently replaced
    Mutant("reg-unknown-method-no-choices", REGISTRY, "get_method",
           "f\"unknown method {name!r}; choose one of {', '.join(sorted(METHODS))}\"", "f'unknown method {name!r}'",
           (f"{CONTRACT}::test_an_unknown_method_is_refused_naming_every_method_to_choose_from",)),
    Mutant("reg-federated-parameters-dropped", REGISTRY, "_register_federated_methods", "MethodSpec()", "()",
           (REG_PARAMS,), arg="parameters"),
    Mutant("reg-parameter-lookup-first", REGISTRY, "MethodSpec.parameter",
           "next((p for p in self.parameters if p.name == name), None)", "next(iter(self.parameters), None)",
           (REG_PARAMS,)),
    Mutant("reg-raw-prototypes-unsaid", REGISTRY, "_register_federated_methods",
           "('summable release' if summable else '') if private else 'raw prototypes leave entities'",
           "'summable release' if summable else ''",
           (f"{CONTRACT}::test_a_non_private_prototype_method_says_raw_prototypes_leave_the_entities",)),
    Mutant("reg-list-without-federated-methods", REGISTRY, "available_methods", "_register_federated_methods()",
           "None", (REG_UNREGISTERED,)),
    Mutant("reg-look-up-without-federated-methods", REGISTRY, "get_method", "_register_federated_methods()",
           "None", (REG_UNREGISTERED,)),
    Mutant("reg-description-last-doc-line", REGISTRY, "_register_federated_methods",
           "(cls.__doc__ or '').strip().split('\\n')[0]", "(cls.__doc__ or '').strip().split('\\n')[-1]",
           (f"{CONTRACT}::test_a_federated_method_is_described_by_the_first_line_of_its_classes_doc",)),
    Mutant("reg-registration-overwritten", REGISTRY, "_register_federated_methods", "name in METHODS", "False",
           (f"{CONTRACT}::test_a_federated_method_registered_again_keeps_the_registration_given",)),
    Mutant("reg-model-notes-dropped", REGISTRY, "_fit_federated",
           "{'releases': model.releases_, 'notes': model.notes_}", "{'releases': model.releases_, 'notes': []}",
           (REG_NOTES,)),
    Mutant("reg-stage-timings-dropped", REGISTRY, "_fit_federated", "dict(model.timings_)", "{}", (REG_NOTES,)),
    Mutant("reg-public-result-dropped", REGISTRY, "_fit_federated",
           "extra.update(trust=model.trust_, public=model.public_, secure_sum=model.secure_sum_)", "None",
           (f"{COT}::test_item_choice_from_the_popularity_sum",), arg="public"),
    Mutant("reg-dp-catalogue-not-passed", REGISTRY, "_fit_federated",
           "FederatedRecommender.from_config(config, random_state=rng).fit(dataset, train, progress=progress, "
           "shared=shared)", "None",
           (f"{SITEMS}::test_a_prototype_method_on_a_dp_catalogue_keeps_each_sites_own_items",), arg="shared"),
    Mutant("reg-trust-record-dropped", REGISTRY, "_fit_federated", "hasattr(model, 'trust_')", "False",
           (COALITION,)),
    Mutant("reg-entity-own-columns-dropped", REGISTRY, "_fit_federated",
           "MethodResult(model.U_, model.V_, model.ledger_, model.messages_, dict(model.timings_), model, extra)",
           "None", (f"{SITEMS}::test_where_the_federation_adds_nothing_round_two_is_the_local_model",),
           arg="factors"),
    Mutant("in-process-log-broadcasts-between-fused-stages", SPROT, "fit_summable",
           "stage != stages[-1] and stage in broadcast_after", "stage != stages[-1]",
           ("tests/test_cooccurrence.py::test_item_choice_from_the_popularity_sum",)),
    Mutant("odometer-empty-entity-charged-to-every-entity", ODO, "BudgetOdometer._alias_map",
           "sorted({*map(str, account), str(e)}) if users[h] else [str(e)]", "sorted({*map(str, account), str(e)})",
           (f"{ODOT}::test_a_declared_entity_without_users_in_a_reexport_charges_none_of_the_accounts_entities",)),
    Mutant("odometer-read-registers-a-probe", ODO, "BudgetOdometer._key_of", "self._secret(create=False)",
           "self._secret(create=True) and self.register(dataset, key) and None", (f"{ODOT}::test_a_read_of_data_the_store_does_not_know_writes_nothing_and_a_preview_never_says_where_its_people_are",)),
    Mutant("odometer-preview-reads-the-matched-entity", ODO, "BudgetOdometer.preview",
           "ident.alias_of is not None and emap", "False", (f"{ODOT}::test_a_read_of_data_the_store_does_not_know_writes_nothing_and_a_preview_never_says_where_its_people_are",)),
    Mutant("spc-isgd-unbounded-claim", SPECS, "register",
           "algo in ('ge', 'isgd')", "algo in ('ge',)",
           (f"{FRIT}::test_only_psgd_and_pals_say_their_unbounded_guarantee_is_as_claimed_by_the_paper",)),
    Mutant("fri-scale-zero-eps", FRIEDMAN, "_scale",
           "eps <= 0", "eps < 0", (f"{FRIT}::test_a_stage_with_a_zero_share_of_epsilon_is_refused_by_name",)),
    Mutant("fri-noisy-count-unfloored", FRIEDMAN, "_noisy_average",
           "np.maximum(noisy_cnt + beta, 1.0)", "noisy_cnt + beta",
           (f"{FRIT}::test_a_noisy_count_below_one_is_floored_at_one",)),
    Mutant("fri-residual-user-avg-dropped", FRIEDMAN, "clamp_residuals",
           "R.values - ge.item_avg[R.items] - ge.user_avg[R.users]", "R.values - ge.item_avg[R.items]",
           (f"{FRIT}::test_residuals_take_off_the_item_and_the_user_average_and_clamp_to_b",)),
    Mutant("fri-auto-batch-bounds", FRIEDMAN, "auto_batch_size",
           "np.clip(n_ratings // 100, 64, 4096)", "np.clip(n_ratings // 100, 1, 4096)",
           (f"{FRIT}::test_the_automatic_mini_batch_is_a_hundredth_of_the_ratings_within_64_and_4096",)),
    Mutant("fri-psgd-iters-20", FRIEDMAN, "FriedmanMF._iters",
           "{'isgd': 20, 'sgd': 20, 'psgd': 5, 'pals': 5, 'als': 10, 'ge': 0}",
           "{'isgd': 20, 'sgd': 20, 'psgd': 20, 'pals': 5, 'als': 10, 'ge': 0}",
           (f"{FRIT}::test_default_iterations_are_the_papers_per_algorithm",)),
    Mutant("fri-split-sum-unchecked", FRIEDMAN, "FriedmanMF._validate",
           "sum(split) > 1 + 1e-09", "sum(split) > 2", (f"{FRIT}::test_a_split_over_the_whole_budget_is_refused",)),
    Mutant("fri-counts-r-min-one", FRIEDMAN, "_estimator_from_config",
           "1.0 if dataset.value_kind == 'ratings' else 0.0", "1.0",
           (f"{FRIT}::test_the_rating_scale_starts_at_one_for_ratings_and_at_zero_for_counts",)),
    Mutant("fri-preprocessing-flag-ignored", FRIEDMAN, "FriedmanMF.fit",
           "self.algorithm in ('isgd', 'psgd', 'pals', 'ge') or self.private_preprocessing",
           "self.algorithm in ('isgd', 'psgd', 'pals', 'ge')",
           (f"{FRIT}::test_private_preprocessing_gives_clean_mf_the_private_global_effects",)),
    Mutant("fri-zero-mode-note-always", FRIEDMAN, "_notes",
           "config.mode == 'zero'", "True", (f"{FRIT}::test_the_observation_mode_note_is_given_in_zero_mode_only",)),
    # Friedman et al.'s pipeline, rule by rule: an explicit zero read as a rating, a private count left
    # exact, a factor left off its norm ball (the sensitivities hold only on it), a model that runs on a
    # setting it should refuse, a baseline or a message size that misstates what the curator received
    Mutant("friedman-explicit-zeros-read-as-ratings", FRIEDMAN, "Ratings.from_matrix", "C.data != 0",
           "np.ones(len(C.data), dtype=bool)", (f"{FRIT}::test_explicit_zeros_of_a_sparse_matrix_are_not_ratings",)),
    Mutant("friedman-projection-of-a-batch-not-written-back", FRIEDMAN, "_project_rows", "F[rows] = sub", "pass",
           (f"{FRIT}::test_sgd_error_clamp_and_projection",)),
    Mutant("friedman-batch-error-unclamped", FRIEDMAN, "sgd_epoch", "e = np.clip(e, -e_max, e_max)", "pass",
           (f"{FRIT}::test_sgd_error_clamp_and_projection",)),
    Mutant("friedman-batch-items-unprojected", FRIEDMAN, "sgd_epoch", "_project_rows(Q, np.unique(i), q_max)",
           "pass", (f"{FRIT}::test_sgd_error_clamp_and_projection",)),
    Mutant("friedman-unbounded-count-exact", FRIEDMAN, "_noisy_average",
           "laplace_noise(count_scale, sums.shape, rng)", "0.0",
           (f"{FRIT}::test_an_unbounded_average_draws_noise_on_its_count_too",)),
    Mutant("friedman-averages-unknown-variant-accepted", FRIEDMAN, "private_global_effects",
           "variant not in VARIANTS", "False",
           (f"{FRIT}::test_private_global_effects_refuse_an_unknown_variant_and_an_empty_rating_scale",)),
    Mutant("friedman-averages-empty-scale-accepted", FRIEDMAN, "private_global_effects", "not r_max > r_min",
           "False", (f"{FRIT}::test_private_global_effects_refuse_an_unknown_variant_and_an_empty_rating_scale",)),
    Mutant("friedman-user-averages-stabilised-by-beta-m", FRIEDMAN, "private_global_effects",
           "_noisy_average(usums, R.user_counts(), g2, beta_u, ss, cs, rng)", "beta_m",
           (f"{FRIT}::test_the_user_averages_are_stabilised_by_beta_u_and_the_item_averages_by_beta_m",), arg=3),
    Mutant("friedman-batch-size-zero-accepted", FRIEDMAN, "sgd_epoch", "bs < 1", "bs < 0",
           (f"{FRIT}::test_a_batch_size_below_one_is_refused_by_name",)),
    Mutant("friedman-sgd-never-shuffles", FRIEDMAN, "sgd_epoch", "rng.permutation(N)", "np.arange(N)",
           (f"{FRIT}::test_an_sgd_epoch_visits_the_ratings_in_the_order_its_generator_draws",)),
    Mutant("friedman-zero-epsilon-accepted", FRIEDMAN, "FriedmanMF._validate", "eps <= 0", "eps < 0",
           (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-nan-epsilon-accepted", FRIEDMAN, "FriedmanMF._validate", "math.isnan(eps)", "False",
           (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-zero-factors-accepted", FRIEDMAN, "FriedmanMF._validate", "self.factors < 1",
           "self.factors < 0", (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-negative-share-accepted", FRIEDMAN, "FriedmanMF._validate", "any((s < 0 for s in split))",
           "False", (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-four-shares-accepted", FRIEDMAN, "FriedmanMF._validate", "len(split) != 5", "False",
           (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-unknown-algorithm-accepted", FRIEDMAN, "FriedmanMF._validate",
           "self.algorithm not in ('isgd', 'psgd', 'pals', 'ge', 'als', 'sgd')", "False",
           (f"{FRIT}::test_a_model_with_an_invalid_setting_is_refused_before_it_reads_a_rating",)),
    Mutant("friedman-clean-mf-residuals-clamped", FRIEDMAN, "FriedmanMF.fit",
           "clamp_residuals(R, self.ge_, self.B) if private else "
           "R.with_values(R.values - self.ge_.item_avg[R.items] - self.ge_.user_avg[R.users])",
           "clamp_residuals(R, self.ge_, self.B)",
           (f"{FRIT}::test_clean_mf_factorises_the_exact_residuals_unclamped",)),
    Mutant("friedman-bounded-psgd-error-unclamped", FRIEDMAN, "FriedmanMF._fit_psgd",
           "2.0 if self.e_max is None else self.e_max", "self.e_max",
           (f"{FRIT}::test_bounded_psgd_clamps_every_error_at_two_unless_told_otherwise",)),
    Mutant("friedman-unbounded-psgd-users-unnoised", FRIEDMAN, "FriedmanMF._fit_psgd", "self.P_ += nP", "pass",
           (f"{FRIT}::test_unbounded_psgd_noises_every_user_and_item_factor",)),
    Mutant("friedman-fake-ratings-unclamped", FRIEDMAN, "perturb_ratings_unbounded", "np.clip(fake, -B, B)",
           "fake", (f"{FRIT}::test_unbounded_input_perturbation_clamps_fake_ratings_to_b",)),
    Mutant("friedman-runs-rank-ignored", FRIEDMAN, "_estimator_from_config",
           "params.setdefault('factors', config.rank)", "pass",
           (f"{FRIT}::test_the_estimator_takes_the_runs_rank_and_lambda_unless_its_parameters_set_them",)),
    Mutant("friedman-runs-lambda-ignored", FRIEDMAN, "_estimator_from_config",
           "params.setdefault('lam', config.lam)", "pass",
           (f"{FRIT}::test_the_estimator_takes_the_runs_rank_and_lambda_unless_its_parameters_set_them",)),
    Mutant("friedman-batch-size-text-unchecked", FRIEDMAN, "_estimator_from_config",
           "params['batch_size'] = int(params['batch_size'])", "pass",
           (f"{FRIT}::test_a_batch_size_that_is_not_a_whole_number_is_refused_naming_it",)),
    Mutant("friedman-item-average-is-the-global-one", FRIEDMAN, "_make_fit.fit", "item_average(R)[:, None]",
           "np.full((m, 1), global_average(R))", (f"{FRIT}::{BASELINES}",)),
    Mutant("friedman-clamp-note-dropped", FRIEDMAN, "_notes",
           "notes.append('The engine scores by U @ Vᵀ, which cannot clamp predictions to the rating scale; the "
           "paper-protocol benchmark (bench/bench_friedman.py) clamps.')", "pass", (f"{FRIT}::{BASELINES}",)),
    Mutant("friedman-message-of-no-size", FRIEDMAN, "_messages",
           "int(block.data.nbytes + block.indices.nbytes + block.indptr.nbytes)", "0", (f"{FRIT}::{BASELINES}",)),
    Mutant("fcf-negatives-kept", FCF_PY, "implicit_matrix",
           "R.data[R.data < 0] = 0.0", "pass",
           (f"{FCFT}::test_the_implicit_matrix_keeps_only_positive_entries_binarised_when_asked",)),
    Mutant("fcf-standard-bias-like-paper", FCF_PY, "FCF.fit",
           "(m / (1 - self.beta1 ** t), v / (1 - self.beta2 ** t))", "(m / (1 - self.beta1), v / (1 - self.beta2))",
           (f"{FCFT}::test_standard_adam_corrects_its_moments_by_the_step_exponent",)),
    Mutant("fcf-zero-epochs-accepted", FCF_PY, "FCF._validate",
           "int(getattr(self, name)) < 1", "int(getattr(self, name)) < 0",
           (f"{FCFT}::test_fewer_than_one_factor_epoch_or_round_is_refused_by_name",)),
    Mutant("fcf-counts-binarised", FCF_PY, "_params",
           "dataset.value_kind != 'counts'", "True",
           (f"{FCFT}::test_counts_keep_their_confidence_and_ratings_are_binarised",)),
    Mutant("fcf-precision-recall-swapped", FCF_PY, "what_one_upload_reveals",
           "hit / len(got) if got else float('nan')", "hit / len(truth) if truth else float('nan')",
           (f"{FCFT}::test_an_uploads_precision_is_over_the_recovered_items_and_recall_over_the_users_own",)),
    # FCF and implicit ALS: a setting that is not one of its choices taken silently, Adam's state or
    # the clients' factors not refreshed as stated, a step up the gradient, a ridge not the run's, the
    # leak or the traffic misstated, an entity's raw release left off the ledger
    Mutant("fcf-unknown-reduction-summed", FCF_PY, "item_gradient", "reduction != 'sum'", "False",
           (f"{FCFT}::test_a_gradient_reduction_other_than_sum_or_mean_is_refused_by_name",)),
    Mutant("fcf-unknown-optimizer-accepted", FCF_PY, "FCF._validate", "self.optimizer not in ('adam', 'gd')", "False",
           (f"{FCFT}::test_an_unknown_optimiser_bias_correction_or_refresh_is_refused_by_name",)),
    Mutant("fcf-unknown-bias-accepted", FCF_PY, "FCF._validate", "self.adam_bias not in ('paper', 'standard')",
           "False", (f"{FCFT}::test_an_unknown_optimiser_bias_correction_or_refresh_is_refused_by_name",)),
    Mutant("fcf-unknown-refresh-accepted", FCF_PY, "FCF._validate", "self.x_refresh not in ('epoch', 'round')",
           "False", (f"{FCFT}::test_an_unknown_optimiser_bias_correction_or_refresh_is_refused_by_name",)),
    Mutant("fcf-step-count-kept-across-epochs", FCF_PY, "FCF.fit", "t = 0", "pass", (FCF_RESET,), nth=1),
    Mutant("fcf-reset-ignored", FCF_PY, "FCF.fit", "self.reset_state_each_epoch", "True", (FCF_RESET,)),
    Mutant("fcf-round-refresh-ignored", FCF_PY, "FCF.fit", "self.x_refresh == 'round' and it > 0", "False",
           (f"{FCFT}::test_round_refresh_re_solves_the_clients_factors_before_every_later_round",)),
    Mutant("fcf-gd-ascends", FCF_PY, "FCF.fit", "Y = Y - self.gamma * g", "Y = Y + self.gamma * g", (FCF_GD,)),
    Mutant("fcf-final-x-stale", FCF_PY, "FCF.fit", "self.X_ = solve_rows(R, Y, self.alpha, self.lam)", "self.X_ = Xf",
           (FCF_GD,)),
    Mutant("fcf-ridge-not-the-runs", FCF_PY, "_params", "params.setdefault('lam', config.lam)", "pass",
           (f"{FCFT}::test_factors_and_ridge_default_to_the_runs_rank_and_lambda_and_a_given_value_wins",)),
    Mutant("fcf-ratings-note-for-counts", FCF_PY, "_notes", "dataset.value_kind == 'ratings'", "True",
           (f"{FCFT}::test_only_ratings_are_said_to_be_binarised",)),
    Mutant("fcf-first-entity-charged", FCF_PY, "_fit_fcf",
           "ledger.spend(name, 'gradient uploads', 'raw per-client gradients every round (no formal privacy)', "
           "math.inf)",
           "ledger.spend(dataset.entity_names[0], 'gradient uploads', 'raw per-client gradients every round (no "
           "formal privacy)', math.inf)", (FCF_TRAFFIC,)),
    Mutant("fcf-download-bytes-halved", FCF_PY, "_fit_fcf.on_round", "n_h * M * K * 8", "n_h * M * K * 4",
           (FCF_TRAFFIC,)),
    Mutant("fcf-rounds-note-counts-epochs", FCF_PY, "_fit_fcf", "model.rounds_", "model.epochs", (FCF_TRAFFIC,),
           nth=0),
    Mutant("fcf-progress-total-epochs", FCF_PY, "_fit_fcf", "int(model.epochs) * int(model.gd_iters)",
           "int(model.epochs)", (FCF_TRAFFIC,)),
    Mutant("fcf-als-first-entity-charged", FCF_PY, "_fit_implicit_als",
           "ledger.spend(name, 'raw data', 'raw interactions (non-private)', math.inf)",
           "ledger.spend(dataset.entity_names[0], 'raw data', 'raw interactions (non-private)', math.inf)",
           (FCF_ALS_POOLED,)),
    Mutant("fcf-als-message-all-users", FCF_PY, "_fit_implicit_als", "(sl.stop - sl.start, dataset.n_items)",
           "(dataset.n_users, dataset.n_items)", (FCF_ALS_POOLED,)),
    Mutant("fcf-uncapped-recovered-items", FCF_PY, "what_one_upload_reveals", "res['items'][:max_items]",
           "res['items']", (FCF_LEAK,)),
    Mutant("fcf-values-claimed-on-partial", FCF_PY, "what_one_upload_reveals", "got and truth == got",
           "got and truth >= got", (FCF_LEAK,)),
    Mutant("fcf-callers-matrix-binarised-in-place", FCF_PY, "implicit_matrix",
           "sp.csr_matrix(X, dtype=np.float64, copy=True)", "False",
           (f"{FCFT}::test_the_implicit_matrix_leaves_the_callers_matrix_as_it_was",), arg="copy"),
    Mutant("fcf-history-epochs-from-zero", FCF_PY, "FCF.fit", "ep + 1", "ep",
           (f"{FCFT}::test_the_history_counts_epochs_from_one_with_the_rounds_so_far",), nth=0),
    Mutant("fcf-none-parameter-kept", FCF_PY, "_params",
           "{k: v for k, v in check_params(declared, config.params, config.method).items() if v is not None}",
           "dict(check_params(declared, config.params, config.method))",
           (f"{FCFT}::test_factors_and_ridge_default_to_the_runs_rank_and_lambda_and_a_given_value_wins",)),
    Mutant("xin-public-floor", XIN_PY, "select_public_users",
           "int(math.ceil(fraction * n))", "int(fraction * n)",
           (f"{XINT}::test_the_share_of_public_users_is_rounded_up",)),
    Mutant("xin-item-means-unrated-zero", XIN_PY, "item_means",
           "np.where(cnt > 0, s / np.maximum(cnt, 1), glob)", "np.where(cnt > 0, s / np.maximum(cnt, 1), 0.0)",
           (f"{XINT}::test_an_item_no_public_user_rated_has_the_global_mean",)),
    Mutant("xin-max-rank-ignored", XIN_PY, "shrink_step",
           "keep[max_rank:] = False", "pass", (f"{XINT}::test_the_rank_of_v_is_capped_at_max_rank",)),
    Mutant("xin-stream-lightest-first", XIN_PY, "XinJaakkola._stream",
           "np.argsort(-np.diff(X.indptr)[private], kind='stable')",
           "np.argsort(np.diff(X.indptr)[private], kind='stable')",
           (f"{XINT}::test_private_users_stream_in_descending_order_of_their_ratings",)),
    Mutant("xin-values-without-top", XIN_PY, "_make_fit.fit",
           "range(1, int(dataset.value_max) + 1)", "range(1, int(dataset.value_max))",
           (f"{XINT}::test_pmd_draws_from_every_rating_of_the_scale_up_to_the_value_bound",)),
    Mutant("xin-private-weight-one", XIN_PY, "XinJaakkola._stream",
           "np.full(len(rows), self.private_weight)", "np.ones(len(rows))",
           (f"{XINT}::test_private_vectors_enter_the_m_step_at_the_private_weight",)),
    # each site keeps what it knows: its own model, its hold-out, the catalogue's items
    Mutant("local-without-the-public-item-features", BUILTIN, "_fit_local",
           "fit_site_model(train[sl], rank=config.rank)", "None", (EMPTY_FEATURES,), arg="features"),
    Mutant("empty-catalogue-site-model-without-the-public-item-features", SUMM, "own_round2",
           "fit_site_model(X, rank=int(method.rank))", "None", (EMPTY_FEATURES,), arg="features"),
    Mutant("empty-catalogue-own-model-without-the-local-blend", SUMM, "own_round2",
           "not method.local_blend", "False", (EMPTY_NO_BLEND,)),
    Mutant("known-items-shrinkage-over-every-item", BLEND, "fit_site_model.g_support",
           "(g_z != 0) if known_only else None", "None", (KNOWN_SHRUNK,)),
    Mutant("clinical-set-of-n-beyond-the-candidates", METRICS, "set_metrics",
           "topn = np.minimum(top, n_cand)", "topn = np.full_like(n_cand, top)", (FEW_CANDIDATES,)),
    Mutant("per-entity-forecast-counts-values", CATFC, "forecast_catalogue", "Xh.data[:] = 1.0", "pass",
           (f"{SITEMS}::test_the_per_entity_forecast_counts_the_users_holding_an_item_not_their_values",)),
    Mutant("release-columns-without-the-first-key", CAT, "SecureCatalogueRelease.columns",
           "np.flatnonzero(self.item_key >= 0)", "np.flatnonzero(self.item_key > 0)",
           (f"{SCAT}::test_a_releases_items_are_every_item_of_a_released_key_the_first_key_included",)),
    Mutant("kept-own-blend-read-under-another-rule", BLEND, "fit_site_model", "_digest('own blend', x_key)", "0.0",
           (f"{KEPT_FITS}[changed0]",), arg=8),
    Mutant("kept-own-nmf-read-under-another-ridge", BLEND, "fit_site_model",
           "(int(rank), float(lam), mode, int(max_iter))", "(int(rank), mode, int(max_iter))",
           (f"{KEPT_FITS}[changed1]",)),
    Mutant("kept-content-model-read-for-other-features", BLEND, "fit_site_model",
           "(float(lam), mode, _digest(features))", "(float(lam), mode)", (CONTENT_ROWS,)),
    Mutant("kept-own-blend-read-for-other-features", BLEND, "fit_site_model", "_digest('own blend', x_key)", "None",
           (CONTENT_ROWS,), arg=9),
    Mutant("hold-out-rows-taken-for-the-sites-rows", BLEND, "_same_rows",
           "a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides and "
           "a.__array_interface__['data'][0] == b.__array_interface__['data'][0]", "a.dtype == b.dtype",
           (CONTENT_ROWS,)),
    Mutant("hold-out-scores-the-first-users", BLEND, "holdout_sample",
           "np.sort(rng.choice(users, HOLDOUT_USERS, replace=False))", "users[:HOLDOUT_USERS]",
           (f"{BLENDT}::test_the_hold_outs_scored_users_are_a_uniform_sample_of_those_with_a_hidden_item",)),
    Mutant("hold-out-ranks-among-the-first-items", BLEND, "holdout_sample",
           "np.sort(rng.choice(n_items, HOLDOUT_ITEMS, replace=False))", "np.arange(HOLDOUT_ITEMS)", (SAMPLES,)),
    Mutant("hold-out-fitted-on-the-first-other-rows", BLEND, "holdout_fit_rows",
           "rng.choice(others, HOLDOUT_FIT_USERS - pick.size, replace=False)",
           "others[:HOLDOUT_FIT_USERS - pick.size]", (SAMPLES,)),
    Mutant("known-items-popularity-over-features-from-the-full-rows", BLEND, "fit_site_model",
           "smooth_over_features(on_known(g, Z), features, 0.5)", "smooth_over_features(g, features, 0.5)",
           (f"{BLENDT}::test_an_item_only_the_hidden_entry_names_is_unknown_on_the_holdout_to_the_popularity_over_"
            "features",)),
    # what users read: the report, time hints, verdicts, budget and CLI lines
    Mutant("report-summary-without-the-guarantees-warnings", RSECTIONS, "_summary", "p.get('warnings') or []", "[]",
           (f"{REPORTT}::test_the_summary_states_every_warning_the_guarantee_rests_on",)),
    Mutant("report-sweep-with-an-infinite-point-voids-no-entity", RSECTIONS, "other_releases",
           "any((not _is_private(r) for r in sweep.get('runs') or []))",
           "all((not _is_private(r) for r in sweep.get('runs') or []))",
           (f"{REPORTT}::test_an_included_release_that_read_every_entitys_exact_rows_names_every_entity_as_voided",)),
    Mutant("report-summable-audit-voids-its-target-only", RSECTIONS, "other_releases",
           "(names or [target]) if reads_all else [target]", "[target]",
           (f"{REPORTT}::test_an_included_release_that_read_every_entitys_exact_rows_names_every_entity_as_voided",)),
    Mutant("time-hint-noise-drawn-once-counted-per-entity-squared", "dpfed_core/evaluation/cost.py", "drawn_coordinates",
           "coordinates / max(float(shape['H']), 1.0)", "coordinates * max(float(shape['H']), 1.0)",
           ("tests/test_cost.py::test_a_sum_whose_noise_is_drawn_once_is_timed_for_one_vector_not_one_per_entity",)),
    Mutant("time-hint-busy-bound-without-the-load", "dpfed_core/evaluation/cost.py", "estimate_with_load",
           "format_seconds(seconds * f)", "format_seconds(seconds)",
           ("tests/test_cost.py::test_a_busy_machine_stretches_the_stated_time_by_its_load",)),
    Mutant("time-hint-hours-with-every-minute", "dpfed_core/evaluation/cost.py", "format_seconds", "m % 60", "m",
           ("tests/test_cost.py::test_hours_are_stated_as_hours_and_the_minutes_past_them",)),
    Mutant("basic-epsilon-note-states-the-smallest-delta", BUDGET, "basic_epsilon_note",
           "max(over, key=lambda b: b['spent_delta'])", "min(over, key=lambda b: b['spent_delta'])",
           ("tests/test_budget_basic_shown.py::test_the_note_on_an_infinite_basic_epsilon_states_the_largest_delta_spent",)),
    Mutant("planned-charge-of-the-cap-not-of-what-is-left", BUDGET, "charge_text",
           "f\"spends ε ≈ {spent(p['spend'])} of the {left(p['left'])} left per entity\"",
           "f\"spends ε ≈ {spent(p['spend'])} of the {left(p['cap_epsilon'])} left per entity\"",
           (f"{ODOT}::test_the_planned_charge_states_the_epsilon_left_after_earlier_releases_and_the_delta_it_"
            "composes_at",)),
    Mutant("planned-charge-silent-on-the-budgets-delta", BUDGET, "planned_charge",
           "p.get('dp_spend', 0.0) > 0 and own and own != {float(p['delta'])}", "False",
           (f"{ODOT}::test_the_planned_charge_states_the_epsilon_left_after_earlier_releases_and_the_delta_it_"
            "composes_at",)),
    Mutant("verdict-even-without-its-reason", VERDICTS, "_count_phrase",
           "f' ({why})' if r['better'] != r['worse'] else ''", "''",
           (f"{VERDICTT}::test_an_even_count_says_why_and_a_long_list_without_test_users_says_how_many_more",)),
    Mutant("verdict-no-test-users-list-reads-complete", VERDICTS, "_tail",
           "f' and {len(nt) - 5} more' if len(nt) > 5 else ''", "''",
           (f"{VERDICTT}::test_an_even_count_says_why_and_a_long_list_without_test_users_says_how_many_more",)),
    Mutant("sweep-verdict-chance-among-one-seed-entities", VERDICTS, "sweep_entity_verdict",
           "int(len(d) > 1)", "1",
           (f"{VERDICTT}::test_over_seeds_chance_is_counted_among_the_entities_with_two_seeds_to_compare",)),
    Mutant("crossing-only-without-privacy-never-weak", VERDICTS, "pays_from_sentence",
           "_weak_evidence(effect)", "''",
           (f"{VERDICTT}::test_a_crossing_only_without_privacy_still_says_when_its_difference_is_weak_evidence",), nth=1),
    Mutant("recommend-banner-tie-band-as-a-fraction", UI_TABLES, "entity_standing_banner", "100 * TIE_FRACTION",
           "TIE_FRACTION", (f"{DASHT}::test_the_recommend_banner_states_the_tie_band_in_percent_of_the_alone_value",)),
    Mutant("budget-line-left-rounded-up", UI_BUDGET, "budget_line", "epsilon_left(top.remaining_epsilon)",
           "epsilon_that_holds(top.remaining_epsilon)",
           ("tests/test_budget_ui.py::test_the_budget_line_rounds_what_is_left_down_and_the_spend_up",)),
    Mutant("cli-versus-dp-popularity-states-its-mean-twice", CLI_MAIN, "cmd_sweep", "row['mean']",
           "row['dp_popularity_mean']",
           (f"{CLIT}::test_a_sweeps_line_against_dp_popularity_states_the_methods_mean_first_as_its_document_does",)),
    Mutant("cli-sweep-without-its-notes", CLI_MAIN, "cmd_sweep", "doc.get('notes', [])", "[]",
           (f"{CLIT}::test_a_sweep_prints_every_note_of_its_document",)),
    Mutant("cli-dry-run-after-it-is-the-releases-own-spend", BUDGET_CMD, "dry_run", "epsilon_that_holds(p['after'])",
           "epsilon_that_holds(p['spend'])",
           (f"{ODOT}::test_a_dry_run_states_where_the_most_spent_entity_ends_after_the_datas_earlier_releases",)),
    Mutant("cli-dry-run-dp-spend-read-as-the-non-private-total", BUDGET_CMD, "dry_run", "epsilon_that_holds(p['dp_after'])",
           "epsilon_that_holds(p['after'])", (f"{ODOT}::test_a_dry_run_of_a_non_private_method_states_the_dp_releases_spend_after_it",)),
    Mutant("budget-list-spend-rounded-down", BUDGET_CMD, "cmd_list", "epsilon_that_holds(r['max_spent_epsilon'])",
           "epsilon_left(r['max_spent_epsilon'])", (f"{ODOT}::test_budget_list_rounds_the_spend_up_and_the_cap_down",)),
    Mutant("budget-show-left-rounded-up", BUDGET_CMD, "print_balance", "epsilon_left(b.remaining_epsilon)",
           "epsilon_that_holds(b.remaining_epsilon)", (f"{ODOT}::test_budget_show_rounds_what_each_entity_has_left_down",)),
    Mutant("budget-summary-void-list-reads-complete", BUDGET_CMD, "budget_summary_line",
           "f' and {len(void) - 5} more' if len(void) > 5 else ''", "''",
           (f"{ODOT}::test_the_line_after_a_run_names_five_voided_entities_and_how_many_more",)),
    Mutant("report-coalition-box-never-marked", RSECTIONS, "_overview", "not secure or c_eps == eps", "True",
           (f"{REPORTT}::test_the_overview_marks_a_weaker_coalition_epsilon_and_says_what_it_means",)),
    Mutant("report-cumulative-void-list-reads-complete", RSECTIONS, "cumulative_text",
           "f' and {len(void) - 5} more' if len(void) > 5 else ''", "''",
           (f"{REPORTT}::test_the_cumulative_spend_names_five_voided_entities_and_how_many_more",)),
    Mutant("report-dp-method-at-infinity-charged-as-dp", RSECTIONS, "_charge_kind",
           "model in (None, 'FEDERATED_USER_DP') and _is_private(doc)", "model in (None, 'FEDERATED_USER_DP')",
           (f"{REPORTT}::test_a_dp_method_compared_without_privacy_voids_every_entity_and_a_simulations_comparisons_"
            "say_so",)),
    Mutant("report-simulations-comparisons-unlabelled", RSECTIONS, "other_releases",
           "eps += f' — {SIMULATION_LABEL}'", "pass",
           (f"{REPORTT}::test_a_dp_method_compared_without_privacy_voids_every_entity_and_a_simulations_comparisons_"
            "say_so",)),
    Mutant("advice-quotes-the-sample-read-otherwise", UI_DEFAULTS, "advice_text",
           "data[0] == doc.get('data') and not (data[1] or {})", "data[0] == doc.get('data')",
           (f"{ADVT}::test_the_advice_quotes_the_measurement_only_on_the_measured_data_read_as_measured",)),
    Mutant("epsilon-below-request-never-the-accountant", UI_ENGINE, "epsilon_below_request", "zcdp", "False",
           (f"{ADVT}::test_an_epsilon_below_the_request_is_explained_by_the_accountant_that_composed_it",), nth=1),
    Mutant("dashboard-stored-run-always-in-process", UI_TABLES, "stored_run_summary", "isinstance(dep, dict)", "False",
           (f"{DASHT}::test_a_stored_runs_line_says_where_it_ran",)),
    Mutant("dashboard-guarantee-silent-without-secure-aggregation", UI_TABLES, "guarantee_text",
           r"text += '\n\nNo secure aggregation: every entity added the full noise to its own release.'", "pass",
           ("tests/test_privacy_labels.py::test_the_dashboards_guarantee_states_the_trust_model_without_secure_"
            "aggregation_too",)),
    Mutant("dashboard-sub-second-run-said-zero-seconds", UI_TABLES, "run_outcome",
           "format_seconds(seconds) if seconds >= 1 else f'{seconds:.2f} s'", "format_seconds(seconds)",
           (f"{DASHT}::test_a_run_under_a_second_states_its_time_in_hundredths",)),
    Mutant("clock-counts-one-run-of-one", "dpfed_core/evaluation/cost.py", "RunClock.text", "len(self.plan) > 1",
           "len(self.plan) >= 1", ("tests/test_cost.py::test_the_clock_counts_runs_only_when_there_are_several",)),
    Mutant("deployment-hint-per-entity-is-the-fixed-seconds", "dpfed_core/evaluation/cost.py", "deployment_estimate",
           "extra[2]", "extra[1]", ("tests/test_cost.py::test_the_deployment_estimate_states_the_fitted_line_it_adds",)),
    Mutant("report-scope-epsilon-rounded-to-nearest", RSECTIONS, "_scope",
           "fmt_eps(run.get('privacy', {}).get('epsilon')).removesuffix(' (non-private)')",
           "fmt_num(run.get('privacy', {}).get('epsilon'))",
           (f"{REPORTT}::test_the_scope_section_states_each_entitys_epsilon_rounded_up_as_the_overview_does",)),
    Mutant("cli-table-epsilon-rounded-to-nearest", CLI_MAIN, "_print_table", "format_epsilon(eps)", "f'{eps:.3g}'",
           (CLI_TABLE,)),
    Mutant("report-entity-epsilon-rounded-to-nearest", RSECTIONS, "_privacy",
           "[{**e, 'epsilon': fmt_eps(e.get('epsilon'))} for e in per_entity]", "per_entity",
           (f"{REPORTT}::test_each_entitys_composed_epsilon_is_stated_rounded_up_as_the_guarantee_is",)),
    # the site's own policy
    Mutant("site-policy-delta-cap-a-tenth", SITE, "_checked_policy", "v >= 1e-2", "v >= 1e-1",
           (f"{SITET}::test_a_policy_delta_of_a_hundredth_or_more_is_refused",)),
    # who the same people are
    Mutant("fingerprint-generic-band-keys-match", FPM, "match_people", "width[width > MAX_BAND_SHARE] = 0", "pass",
           (f"{FPT}::test_a_standard_set_many_stored_people_share_does_not_make_strangers_the_same_people",)),
    Mutant("fingerprint-one-person-of-an-entity-not-charged", FPM, "match_people", "counts >= 1", "counts >= 2",
           (f"{FPT}::test_a_pool_of_a_few_people_of_every_entity_is_mapped_onto_every_one_of_them",)),
    # the runs left a user reads before deciding
    Mutant("runs-left-misses-a-release-landing-on-the-cap", ODO, "BudgetOdometer.runs_left",
           "compose_releases([*cur, *add], dref).epsilon <= cap_e * (1 + CAP_REL_TOL)",
           "compose_releases([*cur, *add], dref).epsilon < cap_e",
           ("tests/test_odometer.py::test_runs_left_is_the_number_of_further_releases_the_cap_then_accepts",)),
    Mutant("runs-left-at-the-reference-delta", ODO, "BudgetOdometer.runs_left",
           "cap_d if cap_d > 0 else REFERENCE_DELTA", "REFERENCE_DELTA",
           ("tests/test_odometer.py::test_runs_left_is_the_number_of_further_releases_the_cap_then_accepts",)),
    # the site's own check of SecAgg+'s unmasking
    Mutant("site-unmask-reveals-both-shares-of-a-node", SITE, "check_unmask", "set(live) & set(gone)", "set()",
           ("tests/test_deployment_apps.py::test_a_site_never_reveals_both_key_shares_of_one_node_nor_unmasks_a_sum_short_"
            "of_its_noise",)),
    Mutant("site-unmask-beyond-its-tolerated-dropouts", SITE, "check_unmask", "len(gone) > allowed", "False",
           ("tests/test_deployment_apps.py::test_a_site_never_reveals_both_key_shares_of_one_node_nor_unmasks_a_sum_short_"
            "of_its_noise",)),
    Mutant("node-unmask-unchecked", CLIENT, "site_policy_mod", "configs.get(Key.STAGE) == Stage.UNMASK", "False",
           ("tests/test_deployment_apps.py::test_a_site_never_reveals_both_key_shares_of_one_node_nor_unmasks_a_sum_short_"
            "of_its_noise",)),
    # what a user reads of a bound or a count
    Mutant("intake-assumed-bound-said-declared", LT, "_build", "value_max is not None", "True",
           ("tests/test_loaders.py::test_a_bound_nobody_declared_is_said_to_be_assumed_not_declared",)),
    Mutant("intake-json-records-named-csv-read-as-a-table", "dpfed_core/data/tables.py", "read_table",
           "opening in (b'[{', b'{\"')", "False",
           ("tests/test_intake_odd_inputs.py::test_json_records_are_named_as_json_with_what_to_do_not_split_into_"
            "columns_of_the_data",)),
    Mutant("intake-one-row-said-in-plural", LT, "_count", "'' if n == 1 else 's'", "'s'",
           ("tests/test_loaders.py::test_value_over_max_as_note", "tests/test_loaders.py::test_empty_entity_dropped_on_request")),
    # rows read into one quoted field: the table parses with those rows merged into one id
    Mutant("intake-rows-in-one-field-need-a-separator-more-than-a-row", LT, "_refuse_rows_in_one_field",
           "line.count(sep) >= fields - 1", "line.count(sep) >= fields", (ROWS_IN_ONE_FIELD,)),
    Mutant("intake-any-line-break-in-a-field-refused", LT, "_refuse_rows_in_one_field",
           "not any((line.count(sep) >= fields - 1 for line in inner))", "False", (ROWS_IN_ONE_FIELD,)),
    Mutant("intake-rows-in-one-field-said-as-empty-fields", LT, "_build",
           "_refuse_rows_in_one_field(df, label, from_text, list(needed))", "pass", (ROWS_IN_ONE_FIELD,)),
    Mutant("intake-record-shape-not-kept-for-the-check", TABLES, "read_table", "lines is not None", "False",
           (ROWS_IN_ONE_FIELD,), nth=0),  # nth in ast.walk's order (breadth first): the if, not the return
    Mutant("verdict-one-entity-said-in-plural", VERDICTS, "_count_phrase", "n == 1", "False",
           (f"{VERDICTT}::test_one_entity_that_differs_is_said_in_the_singular",)),
    Mutant("site-refusal-clause-says-its-rule-twice", "dpfed_core/deployment/server_app.py", "refusal_lines",
           "d['message'].removeprefix()", "d['message']",
           ("tests/test_deployment_apps.py::test_a_run_every_local_site_would_refuse_is_one_error_naming_the_flag_before_"
            "anything_starts",)),
    Mutant("budget-line-command-without-its-store", "dpfed_core/cli/budget_cmd.py", "budget_show_command",
           "add_store_args(p, charging=False)", "None",
           ("tests/test_odometer.py::test_the_line_after_a_run_names_a_budget_show_that_runs_as_printed",)),
    # a budget split never spends more than the whole, nor declares a stage with no share
    Mutant("budget-split-shares-a-percent-over-the-whole-accepted", BSPLIT, "BudgetSplit.__post_init__",
           "total > 1 + _SUM_TOL", "total > 1.01 + _SUM_TOL",
           (f"{BST}::test_shares_adding_up_to_a_hair_over_the_whole_or_a_share_of_zero_are_refused",)),
    Mutant("budget-split-share-of-zero-accepted", BSPLIT, "BudgetSplit.__post_init__",
           "0 < share <= 1", "0 <= share <= 1",
           (f"{BST}::test_shares_adding_up_to_a_hair_over_the_whole_or_a_share_of_zero_are_refused",)),
    # the results document names where the noise came from
    Mutant("noise-provenance-production-said-to-be-simulation", "dpfed_core/privacy/noise.py", "noise_provenance",
           "if simulation:\n    return SIMULATION_LABEL", "if not simulation:\n    return SIMULATION_LABEL",
           ("tests/test_noise.py::test_the_results_document_names_the_noise_source_of_production_simulation_and_"
            "non_private_runs",)),
    # dp-als refuses settings out of range, naming them
    Mutant("als-one-item-accepted", ALS, "DPALS.check",
           "(('steps', 1), ('max_items', 2), ('rank', 1))", "(('steps', 1), ('max_items', 1), ('rank', 1))",
           (f"{ALST}::test_an_als_setting_out_of_range_is_refused_naming_it",)),
    Mutant("als-zero-steps-accepted", ALS, "DPALS.check",
           "(('steps', 1), ('max_items', 2), ('rank', 1))", "(('steps', 0), ('max_items', 2), ('rank', 1))",
           (f"{ALST}::test_an_als_setting_out_of_range_is_refused_naming_it",)),
    Mutant("als-unknown-mode-accepted", ALS, "DPALS.check",
           "self.mode not in ('zero', 'observed')", "False",
           (f"{ALST}::test_an_als_setting_out_of_range_is_refused_naming_it",)),
    # a re-read holding exactly the threshold share of the stored people is the same people
    Mutant("fingerprint-containment-threshold-strict", FPM, "is_same_people",
           "m.contained >= CONTAINMENT_THRESHOLD", "m.contained > CONTAINMENT_THRESHOLD",
           (f"{FPT}::test_a_match_exactly_at_the_containment_threshold_is_the_same_people",)),
    # a budget cap of ε = 0 is refused, not stored as a cap nothing can fit under
    Mutant("odometer-cap-of-zero-epsilon-accepted", ODO, "BudgetOdometer.set_cap", "epsilon <= 0", "epsilon < 0",
           (f"{ODOT}::test_a_cap_of_zero_epsilon_is_refused_naming_epsilon",)),
    # value_bounds of one value (low = high) are a valid policy, as its own message says
    Mutant("site-policy-value-bounds-of-one-value-refused", SITE, "_checked_policy",
           "bounds[0] <= bounds[1]", "bounds[0] < bounds[1]",
           (f"{SITET}::test_value_bounds_of_one_value_are_accepted_as_low_equal_to_high",)),
    Mutant("fingerprint-profile-of-the-minimum-length-dropped", FPM, "_profile_keys",
           "nnz < PROFILE_MIN_ITEMS", "nnz <= PROFILE_MIN_ITEMS",
           (f"{FPT}::test_a_profile_of_exactly_the_minimum_length_is_keyed_and_a_shorter_one_is_not",)),
    # an output file is replaced whole, never through a link, never with other permissions than it had
    Mutant("atomic-write-through-a-symbolic-link", ATOMIC, "check_target", "p.is_symlink()", "False",
           (f"{ODD}::test_a_write_to_a_symbolic_link_is_refused_at_write_time_and_the_link_and_its_target_kept",)),
    Mutant("atomic-rewrite-drops-the-files-permissions", ATOMIC, "atomic_write", "p.exists()", "False",
           (f"{ODD}::test_a_rewritten_output_keeps_its_permissions_and_a_new_one_follows_the_umask",)),
    Mutant("atomic-new-file-ignores-the-umask", ATOMIC, "atomic_write", "0o666 & ~umask", "0o600",
           (f"{ODD}::test_a_rewritten_output_keeps_its_permissions_and_a_new_one_follows_the_umask",)),
    Mutant("atomic-read-only-output-accepted", ATOMIC, "check_writable",
           "p.exists() and not os.access(p, os.W_OK)", "False",
           (f"{ODD}::test_an_existing_read_only_output_is_refused_before_any_computation",)),
    Mutant("atomic-trailing-slash-read-as-a-file-name", ATOMIC, "check_writable",
           "str(path).endswith(('/', os.sep))", "False",
           (f"{ODD}::test_an_output_ending_in_a_slash_names_a_folder_and_is_refused_before_anything_is_written",)),
    # a DP prototype method treats k as a maximum: comparing it with a true entity size would leak it
    Mutant("protocol-k-compared-with-true-entity-size-under-dp", PROTO, "FederatedRecommender._fit_prototypes",
           "not private and self.k > largest", "self.k > largest",
           (f"{PROTOT}::test_k_above_the_largest_entity_is_refused_for_a_non_private_method_only",)),
    Mutant("protocol-k-above-every-entity-accepted", PROTO, "FederatedRecommender._fit_prototypes",
           "not private and self.k > largest", "False",
           (f"{PROTOT}::test_k_above_the_largest_entity_is_refused_for_a_non_private_method_only",)),
    # a position one past an entity's users is the next entity's first user
    Mutant("protocol-user-position-past-the-entity", PROTO, "user_row",
           "0 <= int(user) < sl.stop - sl.start", "0 <= int(user) <= sl.stop - sl.start",
           (f"{PROTOT}::test_a_users_position_is_within_its_entity_never_the_next_entitys_first_user",)),
    Mutant("protocol-catalogue-of-another-item-axis-accepted", PROTO, "FederatedRecommender.fit",
           "shared is not None and shared.n_items != X.shape[1]", "False",
           (f"{PROTOT}::test_a_catalogue_of_another_item_axis_is_refused_before_any_release",)),
    # round 1 of a summable method must not read the entries its round 2 validates on
    Mutant("protocol-summable-round1-reads-validation-entries", PROTO, "FederatedRecommender._fit_summable",
           "drop_entries(own[h], drops[h])", "own[h]",
           (f"{SITEMS}::test_a_summable_round_one_reads_each_sites_rows_without_its_validation_entries",)),
    Mutant("protocol-streamed-summable-round1-reads-validation-entries", PROTO, "FederatedRecommender._fit_summable",
           "X.block(sl.start, sl.stop, drops[h])", "X.block(sl.start, sl.stop)",
           (f"{SITEMS}::test_a_summable_round_one_reads_each_sites_rows_without_its_validation_entries",)),
    # the public item features reach every site's round 2
    Mutant("protocol-prototype-round2-without-public-features", PROTO, "FederatedRecommender._fit_prototypes",
           "getattr(dataset, 'item_features', None)", "None",
           (f"{SITEMS}::test_a_prototype_method_on_a_dp_catalogue_gives_each_site_its_public_feature_parts",)),
    Mutant("protocol-summable-round2-without-public-features", PROTO, "FederatedRecommender._fit_summable",
           "getattr(dataset, 'item_features', None)", "None",
           (f"{SITEMS}::test_a_summable_round_two_has_the_public_feature_parts_beside_the_federations",)),
    # FCF's gradients and Xin & Jaakkola's releases leave the sites: never "they release nothing"
    Mutant("privacy-model-no-formal-claim-said-to-release-nothing", "dpfed_core/privacy/model.py",
           "PrivacyModel.releases", "self is not PrivacyModel.NO_RELEASE",
           "self not in (PrivacyModel.NO_RELEASE, PrivacyModel.NO_FORMAL_CLAIM)",
           ("tests/test_method_contract.py::test_a_method_without_a_formal_claim_is_said_to_release_and_only_no_"
            "release_methods_spend_nothing",)),
    # a comparison's row saying the wrong privacy, or its own parameters refused (the Advanced panel loses them)
    Mutant("xin-full-said-to-have-no-formal-claim", SPECS, "register", "PrivacyModel.NON_PRIVATE",
           "PrivacyModel.NO_FORMAL_CLAIM", (COMPARISON_PRIVACY,), nth=2),
    Mutant("xin-public-said-non-private", SPECS, "register", "PrivacyModel.NO_FORMAL_CLAIM",
           "PrivacyModel.NON_PRIVATE", (COMPARISON_PRIVACY,), nth=1),
    Mutant("fcf-server-parameters-undeclared", SPECS, "register", "FCF_PARAMETERS", "ALS_PARAMETERS",
           (OWN_PARAMETERS,)),
    Mutant("xin-parameters-undeclared", SPECS, "register", "XIN_PARAMETERS", "()", (OWN_PARAMETERS,)),
    Mutant("friedman-baseline-parameters-undeclared", SPECS, "register", "FRIEDMAN_PARAMETERS", "()",
           (OWN_PARAMETERS,), nth=0),
    # FCF's or Xin & Jaakkola's row stating an ε it cannot honour, and charged as if it were a DP release
    Mutant("privacy-model-no-formal-claim-takes-a-budget", "dpfed_core/privacy/model.py", "PrivacyModel.uses_budget",
           "(PrivacyModel.FEDERATED_USER_DP, PrivacyModel.CENTRAL_RATING_DP)",
           "(PrivacyModel.FEDERATED_USER_DP, PrivacyModel.CENTRAL_RATING_DP, PrivacyModel.NO_FORMAL_CLAIM)",
           (f"{FCFT}::test_registered_fcf_runs_and_logs_every_round",)),
    # a declared eICU formulary is read as the data is: drug names normalised, `|` levels public features
    Mutant("eicu-formulary-drug-names-not-normalised", "dpfed_core/data/eicu.py", "load_eicu",
           "ids = normalize_drug_names(pd.Series(ids)).tolist()", "pass",
           ("tests/test_intake_lists.py::test_eicu_formulary_hierarchy_and_drug_tokens",)),
    Mutant("eicu-formulary-hierarchy-not-public-features", "dpfed_core/data/eicu.py", "load_eicu",
           "hierarchy_features(declared.ids, declared.ids)", "None",
           ("tests/test_loaders.py::test_a_declared_list_of_hierarchical_eicu_names_gives_the_public_hierarchy_as_"
            "features",)),
    # what a list or a number reads as: nothing silently accepted, a note only when it is true
    Mutant("strict-int-of-any-length", INP, "strict_int", "len(t) > 40", "False", (f"{LISTST}::test_strict_numbers",)),
    Mutant("blank-names-read-as-an-empty-list", INP, "read_list", "not ids", "False",
           (f"{LISTST}::test_a_list_given_as_names_that_are_all_blank_is_refused_and_repeats_are_counted",)),
    Mutant("utf8-list-note-under-a-utf8-data-encoding", INP, "read_list", "check_encoding(encoding) != 'utf-8'", "True",
           (f"{LISTST}::test_a_utf8_list_beside_data_of_another_encoding_is_read_as_utf8_and_said_only_then",)),
    Mutant("csv-list-line-without-an-id-accepted", INP, "parse_list", "any((x == '' for x in ids))", "False",
           (f"{LISTST}::test_a_csv_list_line_without_an_id_is_refused_naming_its_line",)),
    Mutant("feature-table-at-the-limit-refused", INP, "check_feature_size", "cells > limit", "cells >= limit",
           (f"{LISTST}::test_a_feature_table_of_exactly_the_limit_is_accepted_and_one_value_more_refused",)),
    Mutant("json-document-one-level-past-the-depth-limit-read", INP, "_json_depth_ok", "depth > limit",
           "depth > limit + 1", (f"{LISTST}::test_json_documents_bounded",)),
    Mutant("repeated-names-of-a-sequence-not-said", INP, "read_list", "len(uniq) < len(ids)", "False",
           (f"{LISTST}::test_a_list_given_as_names_that_are_all_blank_is_refused_and_repeats_are_counted",), nth=1),
    Mutant("u-item-table-read-as-a-plain-list", INP, "parse_list",
           "parse_pipe_table(lines) if csv_sep is None else None", "None",
           (f"{SITEMS}::test_a_pipe_table_is_read_as_a_catalogue_and_as_item_features",)),
    # the public-input readers: a Windows export's names garbled, a list of names taken for a MovieLens item
    # table (or a table's flags misnamed), a feature file with a repeated or blank column or id, a line of
    # another width or an infinite value read anyway, category features that relate nothing or drop the commonest
    Mutant("inputs-windows-export-read-as-latin1", INP, "single_byte_encoding", "raw.decode('cp1252')",
           "raw.decode('latin-1')", (f"{LISTST}::test_a_list_in_no_utf8_is_read_as_windows_1252_when_it_decodes_so",)),
    Mutant("inputs-utf8-bom-kept-in-the-text", INP, "decode_text", "text[1:] if text.startswith('\\ufeff') else text",
           "text", (f"{LISTST}::test_a_pipe_table_after_a_utf8_byte_order_mark_is_still_read_as_flag_features",)),
    Mutant("inputs-four-field-names-read-as-an-item-table", INP, "parse_pipe_table", "width < 5", "width < 4",
           (f"{LISTST}::test_a_pipe_table_needs_five_fields_a_unique_whole_id_and_two_flag_columns",)),
    Mutant("inputs-one-flag-column-makes-an-item-table", INP, "parse_pipe_table", "tail < 2", "tail < 1",
           (f"{LISTST}::test_a_pipe_table_needs_five_fields_a_unique_whole_id_and_two_flag_columns",)),
    Mutant("inputs-item-table-with-a-repeated-id-accepted", INP, "parse_pipe_table", "len(set(ids)) < len(ids)",
           "False", (f"{LISTST}::test_a_pipe_table_needs_five_fields_a_unique_whole_id_and_two_flag_columns",)),
    Mutant("inputs-untitled-movie-named-by-nothing", INP, "parse_pipe_table", "r[1].strip() or r[0].strip()",
           "r[1].strip()", (f"{LISTST}::test_a_pipe_table_needs_five_fields_a_unique_whole_id_and_two_flag_columns",)),
    Mutant("inputs-any-flag-columns-named-as-genres", INP, "parse_pipe_table", "tail == len(MOVIELENS_GENRES)", "True",
           (f"{LISTST}::test_the_flags_of_a_pipe_table_are_named_as_genres_only_when_they_are_movielens_nineteen",)),
    Mutant("inputs-feature-named-twice-accepted", INP, "read_item_features", "len(set(header)) < len(header)", "False",
           (f"{LISTST}::test_an_item_features_header_naming_a_feature_twice_is_refused",)),
    Mutant("inputs-feature-line-of-another-width-read", INP, "read_item_features", "len(r) != len(header)", "False",
           (f"{LISTST}::test_an_item_features_line_of_another_width_than_the_header_is_refused_naming_it",)),
    Mutant("inputs-infinite-feature-accepted", INP, "read_item_features", "not math.isfinite(v)", "False",
           (f"{LISTST}::test_an_infinite_item_feature_is_refused_naming_its_cell",)),
    Mutant("inputs-feature-line-without-an-id-accepted", INP, "read_item_features", "any((x == '' for x in ids))",
           "False", (f"{LISTST}::test_an_item_features_line_without_an_item_id_is_refused_naming_it",)),
    Mutant("inputs-rarest-categories-first", INP, "read_item_features", "shared.sort(key=lambda k: -count[k])",
           "shared.sort(key=lambda k: count[k])",
           (f"{LISTST}::test_category_features_come_commonest_first_then_in_file_order",)),
    Mutant("inputs-category-features-not-capped", INP, "read_item_features", "shared[:MAX_CATEGORY_FEATURES]", "shared",
           (f"{LISTST}::test_category_features_are_cut_to_the_commonest_up_to_the_limit",)),
    Mutant("inputs-category-value-counted-per-mention", INP, "read_item_features", "dict.fromkeys(values)", "values",
           (f"{LISTST}::test_a_category_value_repeated_in_one_cell_is_on_one_item_and_relates_it_to_nothing",)),
    Mutant("inputs-json-escape-swallows-a-far-quote", INP, "_json_depth_ok",
           "text[m.start() + 1:m.start() + 2] in '\"\\\\'", "True",
           (f"{LISTST}::test_a_backslash_escapes_only_the_character_next_to_it_in_the_json_depth_check",)),
    Mutant("inputs-output-in-a-subfolder-of-the-data-overwritten", INP, "check_output_not_input",
           "inside and o_id is not None", "False",
           (f"{LISTST}::test_an_output_that_is_a_file_anywhere_inside_an_input_folder_is_refused",)),
    Mutant("inputs-utf32-mark-read-as-utf16", INP, "marked_codec", "head.startswith(bom)",
           "head.startswith(bom) and 'utf-32' not in name",
           (f"{LISTST}::test_a_utf32_list_is_told_by_its_mark_from_utf16_whose_mark_begins_it",)),
    Mutant("inputs-damaged-workbook-not-told-by-its-name", INP, "is_workbook", "name.endswith(WORKBOOK_SUFFIXES)",
           "False", (f"{ODD}::test_a_workbook_is_told_by_its_name_when_its_bytes_are_damaged_and_an_ods_by_its_content",)),
    Mutant("inputs-opendocument-spreadsheet-said-a-zip", INP, "is_workbook", "b'opendocument.spreadsheet' in head",
           "False", (f"{ODD}::test_a_workbook_is_told_by_its_name_when_its_bytes_are_damaged_and_an_ods_by_its_content",)),
    Mutant("inputs-folder-said-a-pipe-or-device", INP, "check_regular_file", "stat.S_ISDIR(st.st_mode)", "False",
           (f"{LISTST}::test_a_folder_given_as_a_list_is_said_to_be_a_folder",)),
    Mutant("inputs-declared-encoding-read-with-replacements", INP, "detect_encoding", "raw.decode(enc)",
           "raw.decode(enc, 'replace')",
           (f"{LISTST}::test_a_list_its_declared_encoding_cannot_decode_is_refused_naming_the_byte",)),
    Mutant("inputs-gzip-inflated-whole-before-the-limit", INP, "read_bounded", "d.decompress(raw, limit + 1)",
           "d.decompress(raw)", (f"{LISTST}::test_a_gzip_list_is_decompressed_no_further_than_the_size_limit",)),
    Mutant("inputs-blank-between-commas-a-name", INP, "split_names", "[id_text(t) for t in fields if id_text(t)]",
           "[id_text(t) for t in fields]", (f"{LISTST}::test_a_blank_between_commas_names_no_entity",)),
    Mutant("inputs-tab-separated-header-not-csv", INP, "_csv_header", "(',', '\\t', ';')", "(',', ';')",
           (f"{LISTST}::test_a_tab_separated_list_with_a_header_is_read_as_ids_and_names",)),
    # the comparison systems' mechanisms as their papers state them
    Mutant("fri-pals-knorm-radius-of-shape-one", FRIEDMAN, "knorm_noise_rows",
           "rng.gamma(shape=d, scale=scales[live])", "rng.gamma(shape=1, scale=scales[live])",
           (f"{FRIT}::test_knorm_noise_per_row_has_a_gamma_radius_of_shape_d_at_each_rows_scale",)),
    Mutant("fri-psgd-unbounded-items-not-projected", FRIEDMAN, "FriedmanMF._fit_psgd",
           "_project_rows(self.Q_, slice(None), qm)", "None", (f"{FRIT}::test_psgd_unbounded_sensitivities_alg5",)),
    Mutant("fri-fake-ratings-all-positive", FRIEDMAN, "perturb_ratings_unbounded",
           "rng.choice([-1.0, 1.0], size=K)", "1.0", (f"{FRIT}::test_input_perturbation_unbounded_fake_ratings",)),
    Mutant("plotted-roc-takes-the-next-test-above-each-fpr", "dpfed_core/audit/lower_bounds.py", "downsample_roc",
           "np.searchsorted(fpr, grid, side='right') - 1", "np.searchsorted(fpr, grid, side='left')",
           ("tests/test_audit.py::test_a_downsampled_roc_shows_at_each_false_positive_rate_no_more_than_the_attack_"
            "reaches_there",)),
    # production noise at a small scale is noise like any other: only a scale of 0 (ε = ∞) is exact
    Mutant("opendp-discrete-laplace-exact-below-scale-one", "dpfed_core/privacy/noise.py",
           "OpenDPSampler.discrete_laplace", "scale == 0 or v.size == 0", "scale <= 1 or v.size == 0",
           (f"{NOISE}::test_noise_opendp_discrete_laplace_fits",)),
    Mutant("opendp-laplace-exact-below-scale-one", "dpfed_core/privacy/noise.py", "OpenDPSampler.laplace",
           "scale == 0 or v.size == 0", "scale < 1 or v.size == 0",
           (f"{NOISE}::test_noise_opendp_float_samplers_fit_and_lie_on_the_grid",)),
    # the zCDP budget of an (ε, δ) run converts back within ε: rounded down, never a root just above it
    Mutant("rho-for-epsilon-not-rounded-down", "dpfed_core/privacy/noise.py", "zcdp_rho_for_epsilon",
           "zcdp_epsilon(rho, delta) <= epsilon", "True",
           (f"{NOISE}::test_the_rho_for_an_epsilon_converts_back_within_it_and_is_the_largest_that_does",)),
    Mutant("zcdp-epsilon-of-zero-rho-converted", "dpfed_core/privacy/noise.py", "zcdp_epsilon", "rho <= 0", "rho < 0",
           (f"{NOISE}::test_the_rho_for_an_epsilon_converts_back_within_it_and_is_the_largest_that_does",)),
    Mutant("simulated-top-k-selects-an-infinite-utility", "dpfed_core/privacy/noise.py", "NumpySampler.noisy_top_k",
           "np.where(np.isfinite(rows), noisy, -np.inf)", "noisy",
           (f"{NOISE}::test_a_utility_that_is_not_a_finite_number_is_never_selected",)),
    # the selection's threshold K is rounded up: rounded down, an item one user holds passes with more than δ/c
    Mutant("catalogue-threshold-rounded-down", CAT, "selection_threshold",
           "math.ceil(b * math.log(c / (delta * (1.0 + math.exp(-1.0 / b)))))",
           "math.floor(b * math.log(c / (delta * (1.0 + math.exp(-1.0 / b)))))",
           ("tests/test_intake.py::test_catalogue_selection_privacy_map",)),
    Mutant("catalogue-share-floored-to-the-grid", CAT, "secure_catalogue_share", "np.round(noisy / grid) * grid",
           "np.floor(noisy / grid) * grid",
           (f"{SCAT}::test_a_share_on_the_secure_sums_grid_is_its_value_rounded_to_the_nearest_multiple",)),
    Mutant("bucket-rows-count-a-users-items-twice", CAT, "_bucket_rows", "B.data[:] = 1.0", "pass",
           (f"{SCAT}::test_a_user_counts_once_in_a_bucket_two_of_their_items_share",)),
    Mutant("catalogue-enumerates-items-the-entity-does-not-hold", CAT, "select_catalogue", "counts > 0", "counts >= 0",
           (f"{SCAT}::test_each_entity_enumerates_only_the_items_its_users_hold",)),
    # the mechanisms' edges: exact counts rounded to the nearest, exact ties broken at random, no overflow in
    # the exact distribution, a negative scale refused
    Mutant("exact-counts-rounded-down", MECH, "count_mechanism", "np.rint(np.asarray(counts, dtype=np.float64))",
           "np.floor(np.asarray(counts, dtype=np.float64))",
           (f"{MECHT}::test_exact_counts_are_rounded_to_the_nearest_whole_number_not_down",)),
    Mutant("exact-choice-takes-the-first-of-a-tie", MECH, "exponential_mechanism", "int(best[rng.integers(best.size)])",
           "int(best[0])", (f"{MECHT}::test_an_exact_choice_among_tied_utilities_is_uniform_over_the_tie",)),
    Mutant("logsumexp-without-its-maximum", MECH, "_logsumexp", "m + math.log(float(np.exp(x - m).sum()))",
           "math.log(float(np.exp(x).sum()))",
           (f"{MECHT}::test_the_exact_output_distribution_holds_for_utilities_far_above_the_exponents_range",)),
    Mutant("negative-laplace-scale-read-as-no-noise", MECH, "laplace_noise", "not scale > 0", "False",
           (f"{MECHT}::test_a_negative_laplace_scale_is_refused_not_read_as_no_noise",)),
    # public item features: every source kept, names told apart, levels and words read as the loaders promise
    Mutant("features-of-the-dataset-dropped-by-a-second-source", "dpfed_core/data/features.py", "attach_item_features",
           "ds.item_features is not None", "False",
           (f"{LISTST}::test_public_feature_sources_are_kept_side_by_side_and_a_repeated_name_told_apart",)),
    Mutant("features-with-one-name-from-two-sources-not-told-apart", "dpfed_core/data/features.py", "attach_item_features",
           "len(set(all_names)) < len(all_names)", "False",
           (f"{LISTST}::test_public_feature_sources_are_kept_side_by_side_and_a_repeated_name_told_apart",)),
    Mutant("features-file-matching-no-item-accepted", "dpfed_core/data/features.py", "attach_item_features", "declared and not hit.any()",
           "False", (f"{LISTST}::test_public_feature_sources_are_kept_side_by_side_and_a_repeated_name_told_apart",)),
    Mutant("hierarchy-levels-case-sensitive", "dpfed_core/data/features.py", "hierarchy_features", "p.strip().lower()", "p.strip()",
           (f"{LISTST}::test_name_features_link_items_by_shared_levels_and_words_not_by_case_or_short_route_words",)),
    Mutant("drug-tokens-of-two-letters-kept", "dpfed_core/data/features.py", "drug_token_features", "len(t) > 2", "len(t) > 0",
           (f"{LISTST}::test_name_features_link_items_by_shared_levels_and_words_not_by_case_or_short_route_words",)),
    Mutant("release-years-before-1900-unread", "dpfed_core/data/features.py", "_year", "r'(18|19|20)\\d\\d'", "r'(19|20)\\d\\d'",
           (f"{LISTST}::test_a_release_year_is_read_from_the_1800s_on",)),
    # an attack on summable releases only is refused among a prototype audit's options, before any charge
    Mutant("audit-summable-attack-accepted-for-a-prototype-method", MEMB, "check_audit_options",
           "a in SUMMABLE_ATTACKS and a not in ATTACK_LABELS and prototype_methods", "False",
           ("tests/test_audit.py::test_an_attack_on_summable_releases_only_is_refused_for_a_prototype_method_before_"
            "the_audit_is_planned",)),
    Mutant("audit-offers-summable-attacks-to-a-prototype-method", MEMB, "check_audit_options",
           "[] if prototype_methods else SUMMABLE_ATTACKS", "SUMMABLE_ATTACKS",
           ("tests/test_audit.py::test_an_attack_on_summable_releases_only_is_refused_for_a_prototype_method_before_"
            "the_audit_is_planned",)),
    # the factorisation's row fit stops on every column and after max_sweeps, a dense X fitted as its sparse copy
    Mutant("observed-row-fit-stops-on-the-last-column", FACTOR, "_observed_sweeps",
           "delta = max(delta, float(np.max(np.abs(step), initial=0.0)))",
           "delta = float(np.max(np.abs(step), initial=0.0))",
           (f"{FACTORT}::test_the_row_fit_stops_only_when_every_column_has_stopped_moving",)),
    Mutant("zero-row-fit-one-sweep-short", FACTOR, "fit_rows_given", "range(max_sweeps)", "range(max_sweeps - 1)",
           (f"{FACTORT}::test_the_row_fit_runs_at_most_max_sweeps_sweeps_from_zero",)),
    Mutant("dense-observed-init-mean-over-all-cells", FACTOR, "fit_nmf", "max(np.count_nonzero(X), 1)", "n * m",
           (f"{FACTORT}::test_a_dense_matrix_is_fitted_as_its_sparse_copy",)),
    # MovieLens: ZIP digits after spaces, every age band's edges, the 1M codes and movie features, the
    # genres of a 100K folder without u.genre, a repeated rating's last line, a features file beside the genres
    Mutant("ml-zip-read-before-stripping", MOVIELENS, "load_movielens", "users['zip'].fillna('').str.strip()",
           "users['zip'].fillna('')",
           (f"{LOADERT}::test_a_zip_code_federates_by_its_first_digit_after_spaces_and_any_other_start_is_other",)),
    Mutant("ml-100k-band-35-44-from-36", MOVIELENS, "load_movielens", "[-np.inf, 18, 25, 35, 45, 50, 56, np.inf]",
           "[-np.inf, 18, 25, 36, 45, 50, 56, np.inf]",
           (f"{LOADERT}::test_movielens_100k_ages_at_every_band_edge_fall_in_the_band_that_starts_there",)),
    Mutant("ml-100k-band-45-49-from-44", MOVIELENS, "load_movielens", "[-np.inf, 18, 25, 35, 45, 50, 56, np.inf]",
           "[-np.inf, 18, 25, 35, 44, 50, 56, np.inf]",
           (f"{LOADERT}::test_movielens_100k_ages_at_every_band_edge_fall_in_the_band_that_starts_there",)),
    Mutant("ml-100k-band-56-plus-from-55", MOVIELENS, "load_movielens", "[-np.inf, 18, 25, 35, 45, 50, 56, np.inf]",
           "[-np.inf, 18, 25, 35, 45, 50, 55, np.inf]",
           (f"{LOADERT}::test_movielens_100k_ages_at_every_band_edge_fall_in_the_band_that_starts_there",)),
    Mutant("ml-1m-occupation-codes-from-one", MOVIELENS, "load_movielens", "dict(enumerate(_ML1M_OCCUPATIONS))",
           "dict(enumerate(_ML1M_OCCUPATIONS, start=1))",
           (f"{LOADERT}::test_movielens_1m_occupations_are_the_readmes_codes_from_zero_and_movies_carry_genres_and_"
            "year",)),
    Mutant("ml-1m-year-read-off-the-genres", MOVIELENS, "_movielens_features", "raw.iloc[:, 1].tolist()",
           "raw.iloc[:, 2].tolist()",
           (f"{LOADERT}::test_movielens_1m_occupations_are_the_readmes_codes_from_zero_and_movies_carry_genres_and_"
            "year",)),
    Mutant("ml-1m-movie-features-dropped", MOVIELENS, "_movielens_features", "raw.shape[1] < 3", "raw.shape[1] < 4",
           (f"{LOADERT}::test_movielens_1m_occupations_are_the_readmes_codes_from_zero_and_movies_carry_genres_and_"
            "year",)),
    Mutant("ml-100k-genres-without-u-genre-miscounted", MOVIELENS, "_movielens_features", "range(raw.shape[1] - 5)",
           "range(raw.shape[1] - 6)",
           (f"{LOADERT}::test_a_movielens_100k_directory_without_u_genre_numbers_its_genre_columns",)),
    Mutant("ml-repeated-rating-averaged", MOVIELENS, "load_movielens", "_build(df, str(rfile), 1)", "'mean'",
           (f"{LOADERT}::test_a_rating_repeated_in_the_ratings_file_counts_as_its_last_line",), arg="duplicates"),
    Mutant("features-declared-source-taken-as-the-first", FEATURES, "attach_item_features", "k == len(tables) - 1",
           "k == 0", (f"{LOADERT}::test_a_features_file_beside_movielens_own_features_is_the_declared_one",)),
    # name features: levels above the leaf and at most three, words split at '/' and ',', in lower case, of
    # three letters or more, counted once per drug, the commonest kept up to the limit
    Mutant("hierarchy-leaf-taken-as-a-level", FEATURES, "hierarchy_features", "len(parts) - 1", "len(parts)",
           (f"{LISTST}::test_hierarchy_levels_stop_above_the_leaf_and_at_three_levels",)),
    Mutant("hierarchy-one-level-beyond-max-depth", FEATURES, "hierarchy_features", "min(max_depth, len(parts) - 1)",
           "min(max_depth + 1, len(parts) - 1)",
           (f"{LISTST}::test_hierarchy_levels_stop_above_the_leaf_and_at_three_levels",)),
    Mutant("drug-words-not-split-at-slashes", FEATURES, "drug_token_features",
           r"re.split(r'[\s\-/,]+', str(nm).lower())", r"re.split(r'[\s\-,]+', str(nm).lower())",
           (f"{LISTST}::test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug",)),
    Mutant("drug-words-not-split-at-commas", FEATURES, "drug_token_features",
           r"re.split(r'[\s\-/,]+', str(nm).lower())", r"re.split(r'[\s\-/]+', str(nm).lower())",
           (f"{LISTST}::test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug",)),
    Mutant("drug-words-case-sensitive", FEATURES, "drug_token_features", "str(nm).lower()", "str(nm)",
           (f"{LISTST}::test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug",)),
    Mutant("drug-words-of-three-letters-dropped", FEATURES, "drug_token_features", "len(t) > 2", "len(t) > 3",
           (f"{LISTST}::test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug",)),
    Mutant("name-keys-counted-per-mention", FEATURES, "_indicators",
           "Counter((k for keys in keys_per_item for k in set(keys)))",
           "Counter((k for keys in keys_per_item for k in keys))",
           (f"{LISTST}::test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug",)),
    Mutant("name-keys-rarest-first", FEATURES, "_indicators", "(-kv[1], kv[0])", "(kv[1], kv[0])",
           (f"{LISTST}::test_name_features_keep_the_commonest_keys_up_to_the_limit",)),
    Mutant("name-keys-beyond-the-limit-kept", FEATURES, "_indicators",
           "[k for k, c in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2][:MAX_NAME_FEATURES]",
           "[k for k, c in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])) if c >= 2]",
           (f"{LISTST}::test_name_features_keep_the_commonest_keys_up_to_the_limit",)),
    # audit targets: the typical user is the one closest to the others on average, a target states its real norm
    # and exposure, a user id of another entity names that entity
    Mutant("audit-mean-distance-over-every-user", AUDIT_TARGETS, "nearest_neighbour_stats", "max(n - 1, 1)",
           "max(n, 1)", (f"{AUDT}::test_nearest_and_mean_distances_are_those_to_the_other_users_hand_checked",)),
    Mutant("audit-target-norm-stated-as-its-sum", AUDIT_TARGETS, "AuditTarget.describe",
           "float(np.linalg.norm(self.row))", "float(np.abs(self.row).sum())",
           (f"{AUDT}::test_a_targets_description_states_its_support_norm_and_exposure",)),
    Mutant("audit-synthetic-exposure-to-the-farthest-user", AUDIT_TARGETS, "make_targets",
           "float(d.min()) if n else math.nan", "float(d.max()) if n else math.nan",
           (f"{AUDT}::test_the_synthetic_targets_exposure_is_its_distance_to_the_nearest_real_user",)),
    Mutant("audit-user-of-another-entity-said-to-be-nobody", AUDIT_TARGETS, "check_target_users", "elsewhere.size",
           "False", (f"{AUDT}::test_the_targets_are_checked_against_the_audited_entitys_own_users",)),
    # the audit's time estimate: a wrong prediction of minutes or hours is what a user plans an audit by
    Mutant("audit-time-per-run-over-the-larger-count", AUDIT_COST, "_calibrate", "(t1 - t0) / (r1 - r0)",
           "(t1 - t0) / r1", (AUDIT_TIME_PARTS,)),
    Mutant("audit-time-without-its-fixed-part", AUDIT_COST, "_calibrate", "max(t0 - slope * r0, 0.0)", "0.0",
           (AUDIT_TIME_PARTS,)),
    Mutant("audit-time-with-the-warm-up", AUDIT_COST, "_calibrate", "if i == 0:\n    continue", "pass",
           (AUDIT_TIME_PARTS,)),
    Mutant("audit-time-power-check-at-infinite-epsilon", AUDIT_COST, "estimate_audit_seconds",
           "sum((1 for e in grid if np.isfinite(e)))", "len(grid)", (AUDIT_TIME_PARTS,)),
    Mutant("audit-time-without-the-power-check", AUDIT_COST, "estimate_audit_seconds",
           "power_check and private and is_summable(m)", "False", (AUDIT_TIME_PARTS,)),
    Mutant("audit-time-calibrated-on-values-of-one", AUDIT_COST, "synthetic_like", "max(int(value_max), 1) + 1", "2",
           (f"{AUDT}::test_the_calibration_data_spans_the_public_bound_and_gives_every_user_an_entry",)),
    Mutant("audit-time-calibrated-with-empty-users", AUDIT_COST, "synthetic_like", "empty.size", "False",
           (f"{AUDT}::test_the_calibration_data_spans_the_public_bound_and_gives_every_user_an_entry",), nth=0),
    Mutant("audit-time-estimated-on-the-whole-federation", AUDIT_COST, "estimate_for_entity",
           "dataset.X[dataset.entity_slices()[h]]", "dataset.X",
           (f"{AUDT}::test_the_time_estimate_of_an_entity_is_timed_on_that_entitys_shape",)),
    # the audit command: what it runs is what it was asked, at the defaults it states
    Mutant("audit-cli-entity-index-read-as-a-name", AUDIT_CMD, "cmd_audit", "entity = int(entity)", "pass",
           (AUDIT_CLI_RUNS,)),
    Mutant("audit-cli-violation-not-warned", AUDIT_CMD, "cmd_audit",
           "any((r['verdict'] == 'VIOLATION' for r in doc['summary']))", "False", (AUDIT_CLI_RUNS,)),
    Mutant("audit-cli-document-not-written", AUDIT_CMD, "cmd_audit", "write_json(doc, args.out)", "pass",
           (AUDIT_CLI_RUNS,)),
    Mutant("audit-cli-power-check-dropped", AUDIT_CMD, "cmd_audit", "args.power_check", "None", (AUDIT_CLI_RUNS,),
           nth=0),
    Mutant("audit-cli-others-read-by-default", AUDIT_CMD, "register_cli", "'zeros'", "'data'", (AUDIT_CLI_RUNS,),
           nth=0),
    Mutant("audit-cli-fewer-runs-by-default", AUDIT_CMD, "register_cli", "200", "20", (AUDIT_CLI_RUNS,), nth=0),
    Mutant("audit-cli-larger-delta-by-default", AUDIT_CMD, "register_cli", "1e-06", "1e-05", (AUDIT_CLI_RUNS,)),
    Mutant("audit-cli-others-data-charged-to-one-entity", AUDIT_CMD, "cmd_audit",
           "args.others == 'data' and any((is_summable(m) for m in args.methods))", "False",
           (f"{AUDT}::test_the_audit_command_plans_a_charge_to_every_entity_when_the_others_hold_their_own_rows",)),
    Mutant("audit-cli-time-of-one-target", AUDIT_CMD, "_expected_time", "len(args.targets)", "1", (AUDIT_CLI_RUNS,)),
    Mutant("audit-cli-time-without-the-power-check", AUDIT_CMD, "_expected_time", "args.power_check is not None",
           "False", (AUDIT_CLI_RUNS,)),
    # what a run states it does otherwise than the paper
    Mutant("paper-k-a-maximum-at-infinite-epsilon", PAPER_DIFF, "paper_differences",
           "float(config.get('epsilon')) != float('inf')", "True", (PAPER_FOLLOWS,)),
    Mutant("paper-one-prototype-asked-said-to-cluster", PAPER_DIFF, "_clustered", "int(config.get('k') or 1) > 1",
           "int(config.get('k') or 1) >= 1", (PAPER_FOLLOWS,)),
    Mutant("paper-reference-method-not-named", PAPER_DIFF, "paper_differences",
           "method in METHODS and (not METHODS[method].federated)", "False", (PAPER_FOLLOWS,)),
    # the local deployment's helpers: the Control API requests, the doorbells, the watchdog, the faster GF(2^128)
    Mutant("simulation-arithmetic-never-installed", SHAMIR, "install_simulation_arithmetic",
           "_Element.__mul__ = _gf128_mul", "pass", (SIM_ARITHMETIC,)),
    Mutant("control-request-drops-the-superlinks-ca", CONTROL, "control_request",
           "None if ca is None else str(ca)", "None", (CONTROL_FORK,)),
    Mutant("control-fork-talks-without-tls", CONTROL, "run_control",
           "Path(req['ca']) if req['ca'] else None", "None", (CONTROL_FORK,)),
    Mutant("control-fork-leaves-its-connection-open", CONTROL, "run_control", "client.close()", "None",
           (CONTROL_FORK,)),
    Mutant("control-error-spans-lines", CONTROL, "run_control", "' '.join(str(exc).split())", "str(exc)",
           (CONTROL_FORK,)),
    Mutant("control-error-without-words-is-empty", CONTROL, "run_control",
           "' '.join(str(exc).split()) or type(exc).__name__", "' '.join(str(exc).split())", (CONTROL_FORK,)),
    Mutant("control-stop-never-sent", CONTROL, "run_control", "client.stop_run(int(req['run_id']))", "None",
           (CONTROL_FORK,)),
    Mutant("control-node-keys-never-registered", CONTROL, "run_control",
           "client.register([Path(p) for p in req['keys']])", "None", (CONTROL_FORK,)),
    Mutant("control-run-config-dropped", CONTROL, "run_control", "dict(req['overrides'])", "{}", (CONTROL_FORK,)),
    Mutant("refused-node-key-taken-as-registered", CONTROL, "ControlClient.register", "not res.node_id", "False",
           (CONTROL_ANSWERS,)),
    Mutant("run-without-id-taken-as-started", CONTROL, "ControlClient.start_run", "not res.HasField('run_id')",
           "False", (CONTROL_ANSWERS,)),
    Mutant("rejected-app-error-without-its-cause", CONTROL, "ControlClient.start_run",
           "f'the SuperLink did not accept the ServerApp: {exc}'", "'the SuperLink did not accept the ServerApp'",
           (CONTROL_ANSWERS,)),
    Mutant("stopping-an-ended-run-raises", CONTROL, "ControlClient.stop_run", "pass", "raise", (CONTROL_ANSWERS,)),
    Mutant("doorbells-on-at-a-real-site", DOORBELL, "enabled", "os.environ.get(ENV) == '1'",
           "os.environ.get(ENV) != '0'", (DOORBELL_OPEN,)),
    Mutant("doorbell-without-a-port-binds-any", DOORBELL, "Doorbell.open", "not port or not enabled()",
           "not enabled()", (DOORBELL_OPEN,)),
    Mutant("doorbell-on-a-taken-port-raises", DOORBELL, "Doorbell.open", "return None", "raise", (DOORBELL_OPEN,),
           nth=1),
    Mutant("doorbell-reachable-from-other-hosts", DOORBELL, "Doorbell.__init__", "self.sock.bind((HOST, int(port)))",
           "self.sock.bind(('0.0.0.0', int(port)))", (DOORBELL_OPEN,)),
    Mutant("doorbell-past-deadline-raises", DOORBELL, "Doorbell.wait", "max(0.0, timeout)", "timeout",
           (DOORBELL_RING,)),
    Mutant("doorbell-rings-not-drained", DOORBELL, "Doorbell.wait", "self.sock.recv(16)", "break", (DOORBELL_RING,)),
    Mutant("doorbell-always-rung", DOORBELL, "Doorbell.wait", "bool(ready)", "True", (DOORBELL_RING,)),
    Mutant("doorbells-rung-when-off", DOORBELL, "ring", "if not enabled():\n    return", "pass", (DOORBELL_RING,)),
    Mutant("one-unreachable-doorbell-stops-the-ring", DOORBELL, "ring", "pass", "raise", (DOORBELL_RING,)),
    Mutant("only-the-first-doorbell-rung", DOORBELL, "ring", "ports", "list(ports)[:1]", (DOORBELL_RING,)),
    Mutant("watchdog-skips-sigterm", WATCHDOG, "clean", "os.killpg(g, signal.SIGTERM)", "None", (WATCHDOG_CLEAN,)),
    Mutant("watchdog-skips-sigkill", WATCHDOG, "clean", "os.killpg(g, signal.SIGKILL)", "None", (WATCHDOG_CLEAN,)),
    Mutant("watchdog-gives-no-grace", WATCHDOG, "_alive", "return True", "return False", (WATCHDOG_CLEAN,)),
    Mutant("watchdog-grace-ends-with-the-first-group", WATCHDOG, "clean", "any((_alive(g) for g in groups))",
           "all((_alive(g) for g in groups))", (WATCHDOG_CLEAN,)),
    Mutant("watchdog-keeps-private-folders", WATCHDOG, "clean", "shutil.rmtree(p, ignore_errors=True)", "None",
           (WATCHDOG_CLEAN,)),
    Mutant("watchdog-waits-the-whole-grace", WATCHDOG, "clean",
           "time.monotonic() < end and any((_alive(g) for g in groups))", "time.monotonic() < end",
           (f"{NODET}::test_the_watchdog_stops_waiting_once_every_group_has_ended",)),
    Mutant("watchdog-cleans-after-release", WATCHDOG, "main", "return", "break", (WATCHDOG_PIPE,)),
    Mutant("watchdog-forgets-process-groups", WATCHDOG, "main", "groups.append(int(arg))", "None", (WATCHDOG_PIPE,)),
    Mutant("watchdog-forgets-folders", WATCHDOG, "main", "paths.append(arg)", "None", (WATCHDOG_PIPE,)),
    Mutant("watchdog-folder-names-keep-the-newline", WATCHDOG, "main", "line.strip().partition(' ')",
           "line.partition(' ')", (WATCHDOG_PIPE,)),
    Mutant("ctrl-c-stops-the-watchdog", WATCHDOG, "main", "signal.signal(signal.SIGINT, signal.SIG_IGN)", "None",
           (WATCHDOG_PIPE,)),
    Mutant("node-method-unchecked-against-the-federations-size", HOOKS, "node_method",
           "summable_method(method_config(config, secure_catalogue), value_max=value_max, n_entities=n_entities)",
           "None", (NODE_DROPOUTS,), arg="n_entities"),
    Mutant("summable-method-ignores-the-federations-size", HOOKS, "summable_method", "method.check(n_entities)",
           "None", (NODE_DROPOUTS,)),
    Mutant("node-prototype-method-unvalidated", HOOKS, "prototype_method",
           "FederatedRecommender.from_config(config)._validate()", "None", (NODE_WEIGHTING,)),
    Mutant("deployed-server-stream-private-for-every-method", HOOKS, "prototype_method_is_private",
           "getattr(method_class(config.method), 'private', False)", "True",
           (f"{NOISE}::test_a_deployed_servers_stream_is_private_exactly_for_the_dp_prototype_methods",)),
    Mutant("deployed-server-counts-one-more-contributor", HOOKS, "combine_stage",
           "method.combine(stage, total, public, rng, contributors)", "contributors + 1",
           ("tests/test_summable.py::test_the_deployed_server_combines_a_secure_sum_with_the_count_of_entities_that_"
            "took_part",), arg=4),
    Mutant("deployed-run-notes-claim-in-process-sums", HOOKS, "server_notes",
           "run_notes(method, public, in_process=False)", "True",
           ("tests/test_summable.py::test_a_deployed_runs_notes_name_flowers_secure_sums_not_the_in_process_"
            "simulation",), arg="in_process"),
    # SecAgg+'s arithmetic: the faster, unhardened multiplication only under the pycryptodome it was written for
    Mutant("fast-arithmetic-installed-under-another-pycryptodome", SHAMIR, "install_simulation_arithmetic",
           "fi.usable('gf128-mul')", "True", (SIM_PINNED,)),
    # whether a killed process provably ended: anything in doubt leaves its reservation charged
    Mutant("proc-start-read-after-the-first-parenthesis", STORE, "_start_ticks", "stat.rsplit(')', 1)",
           "stat.split(')', 1)", (START_TICKS,)),
    Mutant("garbled-proc-start-raises", STORE, "_start_ticks", "len(fields) > 19 and fields[19].isdigit()",
           "len(fields) > 19", (START_TICKS,)),
    Mutant("unreadable-start-taken-for-gone", STORE, "process_gone", "start is not None and start != owner['start']",
           "start != owner['start']", (NOT_GONE,)),
    Mutant("identity-with-a-key-more-taken-for-gone", STORE, "process_gone", "set(owner) != set(_IDENTITY_TYPES)",
           "not set(_IDENTITY_TYPES) <= set(owner)", (NOT_GONE,)),
    Mutant("process-of-an-earlier-boot-taken-for-gone", STORE, "process_gone", "('host', 'boot', 'pidns', 'uid')",
           "('host', 'pidns', 'uid')", (NOT_GONE,)),
    # where the store is: a setting that names no usable file falls back, never to the working directory
    Mutant("relative-xdg-data-home-used", STORE, "data_home", "xdg and os.path.isabs(xdg)", "xdg", (STORE_PATH,)),
    Mutant("owner-of-no-usable-characters-accepted", STORE, "default_store_path", "not safe", "False", (STORE_PATH,)),
    Mutant("owner-name-keeps-its-dots", STORE, "default_store_path",
           "re.sub('[^A-Za-z0-9_.-]', '_', str(owner)).strip('._')[:80]",
           "re.sub('[^A-Za-z0-9_.-]', '_', str(owner))[:80]",
           (STORE_PATH,)),
    Mutant("blank-store-variable-read-as-a-path", STORE, "default_store_path", "os.environ.get(STORE_ENV, '').strip()",
           "os.environ.get(STORE_ENV, '')", (STORE_PATH,)),
    Mutant("store-variable-home-not-expanded", STORE, "default_store_path", "Path(env).expanduser()", "Path(env)",
           (STORE_PATH,)),
    Mutant("empty-store-path-is-the-working-directory", STORE, "resolve_store_path", "path is None or str(path) == ''",
           "path is None", (STORE_PATH,)),
    # a store whose pages are damaged is said damaged, with what to do, never a bare SQLite message
    Mutant("malformed-store-given-sqlites-words-only", STORE, "Store._translate",
           "'not a database' in low or 'malformed' in low or 'corrupt' in low", "'not a database' in low",
           (DAMAGED_PAGES,)),
    # a store that cannot be written opens for reading; one that cannot be set up leaves no file at all
    Mutant("store-in-a-read-only-directory-opened-for-writing", STORE, "Store._initialise",
           "os.access(self.path, os.W_OK) and os.access(parent, os.W_OK)", "os.access(self.path, os.W_OK)",
           (READ_ONLY_DIR,)),
    Mutant("failed-store-leaves-its-journal", STORE, "Store._initialise", "('', '-wal', '-shm', '-journal')",
           "('',)", (NO_JOURNAL_LEFT,)),
    # a fingerprint key the environment names may serve other stores
    Mutant("shared-key-refuses-every-new-store", STORE, "own_key_left", "os.environ.get(SECRET_ENV, '').strip()",
           "False", (SHARED_KEY,)),
    Mutant("emptied-store-advice-deletes-a-shared-key", STORE, "Store._refuse_wiped",
           "os.environ.get(SECRET_ENV, '').strip()", "False", (SHARED_KEY,)),
    Mutant("store-cut-short-said-emptied", STORE, "Store._refuse_wiped", "self.path.stat().st_size != 0",
           "self.path.stat().st_size > 4096", (CUT_SHORT,)),
    # the dataset key: what every stored budget is filed under
    Mutant("dataset-key-recipe-changed", BREC, "_strings_digest", "h.update(len(parts).to_bytes(8, 'little'))", "pass",
           (KNOWN_KEY,)),
    Mutant("dataset-key-users-ordered-by-id-first", BREC, "_dataset_key", "np.lexsort((uid, ent))",
           "np.lexsort((ent, uid))", (KNOWN_KEY,)),
    Mutant("dataset-key-of-a-collected-object-reused", BREC, "dataset_key", "hit[0]() is dataset", "True",
           (KEY_MEMO,)),
    # what an account has left: nothing within the cap check's slack, and no bound once the cap is removed
    Mutant("float-dust-shown-as-budget-left", BREC, "EntityBalance._left", "left <= cap * CAP_REL_TOL", "left <= 0",
           (BALANCE_SAYS,)),
    Mutant("removed-cap-still-bounds-delta", BREC, "EntityBalance.remaining_delta", "math.isfinite(self.cap_epsilon)",
           "math.isfinite(self.cap_delta)", (BALANCE_SAYS,)),
    # a simulation's noise is reproducible from its seed: recorded, never charged, even when settled from its ledger
    Mutant("simulation-charged-when-settled", BREC, "Reservation.settle",
           "charges is not None and (not plan.simulation)", "charges is not None", (SIMULATION_SETTLED,)),
    # a release that spends only δ (ε = 0) is still charged its δ
    Mutant("delta-only-charge-dropped", BREC, "mapped_charge_rows", "eps == 0 and dlt == 0", "eps == 0",
           (DELTA_ALONE,)),
    # a release that moves one entity's raw data is non-private, whatever it does for the others
    Mutant("release-non-private-only-when-every-entity-is", BREC, "PlannedRelease.non_private",
           "any((math.isinf(e) for e, _ in self.charges.values()))",
           "all((math.isinf(e) for e, _ in self.charges.values())) and bool(self.charges)", (ONE_ENTITY_RAW,)),
    # a sweep's unstarted points: only points of the plan, only those still reserved, only of their operation
    Mutant("negative-point-index-withdraws-the-last-point", BREC, "Reservation.withdraw_unstarted",
           "0 <= i < len(self.release_ids)", "i < len(self.release_ids)", (UNSTARTED_POINTS,)),
    Mutant("settled-point-reported-withdrawn", BREC, "Reservation.withdraw_unstarted",
           "self.release_ids[i] in self._open", "True", (UNSTARTED_POINTS,)),
    Mutant("killed-sweep-progress-names-one-account", BREC, "Reservation.track", "[rid, *self.extra_of.get(i, ())]",
           "[rid]", (KILLED_EVERY_ACCOUNT,)),
    Mutant("run-in-doubt-moved-by-a-finished-count", BREC, "Reservation.note_finished",
           "self._progress is None or self._progress['finished'] is None", "self._progress is None",
           (NO_KNOWN_ORDER,)),
    Mutant("negative-finished-count-gives-back-the-point-in-flight", BREC, "_progress_of_gone",
           "type(finished) is not int or finished < 0", "type(finished) is not int", (NEGATIVE_COUNT,)),
    Mutant("progress-row-withdraws-another-operations-releases", BREC, "recover_killed",
           "[r for ids in plan_ids[finished + 1:] for r in ids if r in own]",
           "[r for ids in plan_ids[finished + 1:] for r in ids]",
           (OWN_OPERATION,)),
    Mutant("progress-row-fails-another-operations-releases", BREC, "recover_killed",
           "[r for ids in plan_ids for r in ids if r in own]", "[r for ids in plan_ids for r in ids]",
           (OWN_OPERATION,)),
    # the dashboard's history: one owner's results of the kind asked, a run's own factors and nothing
    # left of a deleted one, a reopened run as it was, a computation settled and refused as charged
    Mutant("ui-history-sweep-keeps-factors", UI_HISTORY, "save", "kind == 'run' and result is not None",
           "result is not None", (RUN_FACTORS_KEPT,)),
    Mutant("ui-history-kind-shown-all", UI_HISTORY, "list_entries",
           "RunHistory(store).list(dataset_key=key, kind=kind, limit=limit)", "None", (HISTORY_LISTED,), arg="kind"),
    Mutant("ui-history-limit-ignored", UI_HISTORY, "list_entries",
           "RunHistory(store).list(dataset_key=key, kind=kind, limit=limit)", "500", (HISTORY_LISTED,),
           arg="limit"),
    Mutant("ui-history-entry-data-named-by-kind", UI_HISTORY, "list_entries", "str(r.get('dataset_name') or '')",
           "str(r['kind'])", (HISTORY_LISTED,)),
    Mutant("ui-history-reopened-unlabelled", UI_HISTORY, "load", "d.get('title', '')", "''", (HISTORY_LISTED,)),
    Mutant("ui-history-deleted-factors-kept", UI_HISTORY, "delete",
           "con.execute('DELETE FROM dashboard_arrays WHERE history_id = ?', (int(entry_id),))", "pass",
           (RUN_FACTORS_KEPT,)),
    Mutant("ui-history-prototypes-not-kept", UI_HISTORY, "_pack_run",
           "np.asarray(rel.prototypes, dtype=np.float64)", "np.zeros(1)", (RUN_FACTORS_KEPT,)),
    Mutant("ui-history-config-infinity-a-string", UI_HISTORY, "restored_run",
           "_restore_inf(dict(stored['config']))", "dict(stored['config'])", (REOPENED_EPSILON,)),
    Mutant("ui-history-charge-never-settled", UI_HISTORY, "charged", "settle is not None", "False", (CHARGED_BODY,)),
    Mutant("ui-history-non-private-always-allowed", UI_HISTORY, "charged",
           "BudgetOdometer(store).charge(dataset, plans, allow_non_private=allow_non_private, key=key)", "True",
           (CHARGED_BODY,), arg="allow_non_private"),
    Mutant("ui-history-simulation-label-reads-store", UI_HISTORY, "planned_charge_text",
           "plans and all((p.simulation for p in plans))", "False", (LABEL_READS_NO_STORE,)),
    Mutant("ui-history-cached-label-reads-store", UI_HISTORY, "planned_charge_text", "cached", "False",
           (LABEL_READS_NO_STORE,)),
    Mutant("ui-history-given-key-ignored", UI_HISTORY, "owner_store", "key or owner_key(dataset)",
           "owner_key(dataset)", (GIVEN_OWNER_KEY,)),
    Mutant("ui-history-reopened-message-log-lost", UI_HISTORY, "restored_run",
           "[SimpleNamespace(**m) for m in doc.get('messages', [])]", "[]", (REOPENED_EPSILON,)),
    Mutant("ui-history-reopened-config-unfiltered", UI_HISTORY, "restored_run",
           "{k: v for k, v in cfg.items() if k in RunConfig.__dataclass_fields__}", "cfg", (REOPENED_EPSILON,)),
    Mutant("ui-history-factorless-flower-run-called-cli", UI_HISTORY, "restored_run",
           "isinstance(doc.get('deployment'), dict)", "False", (FACTORLESS_RUN,)),
    Mutant("ui-history-factors-stored-under-another-run", UI_HISTORY, "save", "(entry_id, blob)",
           "(entry_id + 1, blob)", (RUN_FACTORS_KEPT,)),
    # the run history's rows: the data's name, the run's ε, the document's time, the releases' operation,
    # a flag that is a flag, the limit; a label that names a Flower deployment and a point without a number
    Mutant("his-data-name-not-stored", HISTORY, "RunHistory.add",
           "str((doc.get('dataset') or {}).get('name', ''))", "''", (HISTORY_ROWS,)),
    Mutant("his-run-epsilon-not-stored", HISTORY, "RunHistory.add", "_as_float(cfg.get('epsilon'))", "None",
           (HISTORY_ROWS,)),
    Mutant("his-created-at-saving", HISTORY, "RunHistory.add", "str(doc.get('created') or now_iso())", "now_iso()",
           (HISTORY_ROWS,)),
    Mutant("his-operation-not-stored", HISTORY, "RunHistory.add", "operation", "None", (HISTORY_ROWS,)),
    Mutant("his-one-more-than-the-limit", HISTORY, "RunHistory.list", "int(limit)", "int(limit) + 1",
           (HISTORY_ROWS,)),
    Mutant("his-simulation-listed-as-a-number", HISTORY, "RunHistory.list",
           "r['simulation'] = bool(r['simulation'])", "pass", (HISTORY_ROWS,)),
    Mutant("his-flower-deployment-unnamed", HISTORY, "entry_label", "isinstance(dep, dict)", "False",
           (DEPLOYED_LABEL,)),
    Mutant("his-missing-grid-point-crashes", HISTORY, "_eps_word", "f is None", "False", (DEPLOYED_LABEL,)),
    # where the noise comes from (privacy/noise.py): the maps a ledger records charge every rounded
    # coordinate, zCDP conversions never under-state ε, partition selection keeps its threshold, the
    # draw-once pool sums each release's own shares, and a sampler refuses or shapes what it cannot draw
    Mutant("noise-laplace-epsilon-one-coordinate", NOISE_PY, "laplace_float_epsilon", "_float_space(size, 'l1')",
           "_float_space(1, 'l1')", (ROUNDING_CHARGED,)),
    Mutant("noise-gaussian-rho-one-coordinate", NOISE_PY, "gaussian_float_rho", "_float_space(size, 'l2')",
           "_float_space(1, 'l2')", (ROUNDING_CHARGED,)),
    Mutant("noise-gaussian-delta-one-coordinate", NOISE_PY, "gaussian_float_delta", "_float_space(size, 'l2')",
           "_float_space(1, 'l2')", (ROUNDING_CHARGED,)),
    Mutant("noise-threshold-one-lower", NOISE_PY, "laplace_threshold", "int(threshold)", "int(threshold) - 1",
           (PARTITION_THRESHOLD,)),
    Mutant("noise-zcdp-epsilon-at-delta-zero-is-zero", NOISE_PY, "zcdp_epsilon",
           "if not 0 < delta < 1:\n    return math.inf", "if not 0 < delta < 1:\n    return 0.0", (ZCDP_EDGES,)),
    Mutant("noise-zcdp-epsilon-overflow-is-zero", NOISE_PY, "zcdp_epsilon", "math.inf", "0.0", (ZCDP_EDGES,), nth=1),
    Mutant("noise-rho-for-a-bad-epsilon-infinite", NOISE_PY, "zcdp_rho_for_epsilon",
           "if not (epsilon > 0 and 0 < delta < 1):\n    return 0.0",
           "if not (epsilon > 0 and 0 < delta < 1):\n    return math.inf", (ZCDP_EDGES,)),
    Mutant("noise-zcdp-epsilon-sigma-rounded-up", NOISE_PY, "zcdp_epsilon", "1 - 1e-12", "1 + 1e-12",
           (EPS_NOT_BELOW,)),
    Mutant("noise-sigma-for-zero-rho-divides-by-zero", NOISE_PY, "gaussian_float_sigma_for_rho", "rho <= 0",
           "rho < 0", (NO_SIGMA,)),
    Mutant("noise-sum-of-no-shares-accepted", NOISE_PY, "SumNoise.__init__", "int(n_shares) < 1", "int(n_shares) < 0",
           (EACH_DRAW,)),
    Mutant("noise-sum-every-draw-joins-the-first-release", NOISE_PY, "SumNoise.gaussian",
           "(rng.calls, rng.calls + 1)", "(rng.calls, rng.calls)", (EACH_DRAW,)),
    Mutant("noise-opendp-top-k-of-no-rows-crashes", NOISE_PY, "OpenDPSampler.noisy_top_k", "rows.shape[0] == 0",
           "False", (NO_ROWS,)),
    Mutant("noise-simulated-max-over-no-finite-utility-chosen", NOISE_PY, "NumpySampler.noisy_max", "_finite_index(u)",
           "None", (NO_FINITE,)),
    Mutant("noise-exact-counts-keep-their-float-type", NOISE_PY, "OpenDPSampler.discrete_laplace",
           "v.astype(np.int64)", "v", (FLOAT_COUNTS,), nth=0),
    Mutant("noise-float-counts-handed-to-the-integer-sampler", NOISE_PY, "OpenDPSampler.discrete_laplace",
           "v.astype(np.int64)", "v", (FLOAT_COUNTS,), nth=1),
    # a pooled stream is a production stream: a sampler chosen by exact type would draw its sum with NumPy
    Mutant("noise-pooled-stream-sampled-by-numpy", NOISE_PY, "sampler_for", "isinstance(rng, SecureGenerator)",
           "type(rng) is SecureGenerator", (POOLED_PRODUCTION,)),
    Mutant("noise-pooled-stream-said-simulation", NOISE_PY, "is_simulation", "not isinstance(rng, SecureGenerator)",
           "type(rng) is not SecureGenerator", (POOLED_PRODUCTION,)),
    # the Data page: what it loads is what the user chose (the key, every event table, the public inputs,
    # the mapping's rules and bound), and an entry it cannot read stops it
    # nth: the matches in ast.walk's order; 1 is the stop after the “Leave out entities” error
    Mutant("datapage-exclusion-error-not-stopped", DATA_SCRIPT, MODULE, "st.stop()", "pass", (UNREAD_EXCLUSION,),
           nth=1),
    Mutant("datapage-movielens-key-always-zip", DATA_SCRIPT, MODULE, ML_OPTIONS,
           ML_OPTIONS.replace("'federation': fed", "'federation': 'zip'"), (ML_PAGE,)),
    Mutant("datapage-movielens-public-inputs-dropped", DATA_SCRIPT, MODULE, ML_OPTIONS,
           ML_OPTIONS.replace(", **ml_public", ""), (ML_PAGE,)),
    Mutant("datapage-eicu-first-table-only", DATA_SCRIPT, MODULE, "tables if len(tables) > 1 else tables[0]",
           "tables[0]", (EICU_PAGE,)),
    Mutant("datapage-eicu-no-table-unsaid", DATA_SCRIPT, MODULE, "root is not None and (not tables)", "False",
           (EICU_PAGE,)),
    Mutant("datapage-eicu-key-always-hospital", DATA_SCRIPT, MODULE, EICU_OPTIONS,
           EICU_OPTIONS.replace("'entity': entity", "'entity': 'hospitalid'"), (EICU_PAGE,)),
    Mutant("datapage-eicu-public-inputs-dropped", DATA_SCRIPT, MODULE, EICU_OPTIONS,
           EICU_OPTIONS.replace(", **eicu_public", ""), (EICU_PAGE,)),
    Mutant("datapage-missing-rows-never-dropped", DATA_SCRIPT, MODULE, "missing == 'drop'", "False", (UPLOAD_RULES,)),
    Mutant("datapage-counts-default-bound-of-ratings", DATA_SCRIPT, MODULE,
           "{'ratings': 5.0, 'counts': 10.0, 'implicit': 1.0}.get(kind, 5.0)", "5.0", (COUNTS_RULES,)),
    Mutant("datapage-counts-offered-a-ratings-rule", DATA_SCRIPT, MODULE, "dash.fixed_duplicate_rule(kind)", "None",
           (COUNTS_RULES,)),
    Mutant("datapage-repeated-ratings-rule-ignored", DATA_SCRIPT, MODULE,
           "c2.selectbox('Repeated (user, item) rows', ['last', 'mean', 'error'], key='map_dups', "
           "format_func=dash.DUPLICATE_WORDS.get)", "'last'", (UPLOAD_RULES,)),
    Mutant("datapage-item-name-column-ignored", DATA_SCRIPT, MODULE, "None if name_col == NONE else name_col", "None",
           (UPLOAD_RULES,), nth=1),
    Mutant("datapage-bad-item-features-built-without", DATA_SCRIPT, "public_inputs", "st.stop()", "pass",
           (BAD_FEATURES_PAGE,)),
    Mutant("datapage-items-metric-counts-users", DATA_SCRIPT, MODULE, "f\"{ov['items']:,}\"", "f\"{ov['users']:,}\"",
           (ML_PAGE,)),
    Mutant("datapage-item-features-unsaid", DATA_SCRIPT, MODULE, "ds.item_features is not None", "False", (ML_PAGE,)),
    Mutant("datapage-cli-line-for-an-attribute-join", DATA_SCRIPT, "_load",
           "fn is ui.load_upload_job and args[4] is None", "fn is ui.load_upload_job", (ATTRIBUTE_JOIN_PAGE,)),
    Mutant("datapage-upload-public-inputs-dropped", DATA_SCRIPT, MODULE, UPLOAD_OPTIONS,
           UPLOAD_OPTIONS.replace(", **upload_public", ""), (DECLARED_PAGE,)),
    # uploaded tables and their reading: long_table, tables, dataset, loaders
    Mutant("tableread-repeated-counts-keep-one", LT, "fixed_duplicate_rule", '{"counts": "sum", "implicit": "max"}',
           '{"counts": "max", "implicit": "max"}', (f"{LOADERT}::test_duplicates_counts_summed_and_event_log",)),
    Mutant("tableread-first-digit-keeps-letters", LT, "derive_entity",
           'first.where(first.isin(list("0123456789")), "other")', "first",
           (f"{LOADERT}::test_entity_from_zip_first_digit",)),
    Mutant("tableread-prefix-of-zero-characters", LT, "derive_entity", "1 <= int(m.group(1)) <= MAX_PREFIX",
           "0 <= int(m.group(1)) <= MAX_PREFIX",
           (f"{RULES}::test_a_choice_a_transform_and_a_release_limit_are_refused_in_the_words_of_the_flags",)),
    Mutant("tableread-entity-key-keeps-outer-spaces", LT, "derive_entity", "values.astype(str).str.strip()",
           "values.astype(str)", (f"{LOADERT}::test_derive_entity_transforms",)),
    Mutant("tableread-unknown-option-ignored", LT, "_reject_removed", "loader is not None and opts", "False",
           (f"{TABLEREAD_READING}::test_an_option_load_long_table_does_not_take_is_refused_by_name_not_ignored",)),
    Mutant("tableread-nan-word-is-no-missing-number", LT, "_is_missing_number", "_is_missing(s, MISSING_NUMBER_WORDS)",
           "_is_missing(s)",
           (f"{RULES}::test_a_missing_number_in_the_value_column_is_missing_and_an_id_spelt_na_is_an_id",)),
    Mutant("tableread-first-category-no-number", LT, "_numeric", "codes >= 0", "codes > 0",
           (f"{LOADERT}::test_csv_roundtrip_and_sorting",)),
    Mutant("tableread-all-dotted-decimals-refused", LT, "_dot_grouped",
           "not dotted.any() or dotted.all() or not texts[dotted].str.fullmatch(_GROUPED).all()",
           "not dotted.any() or not texts[dotted].str.fullmatch(_GROUPED).all()",
           (f"{ODD}::test_dots_that_group_thousands_are_refused_not_read_as_decimals",)),
    Mutant("tableread-dot-grouping-read-as-decimals", LT, "_values", "grouped is not None", "False",
           (f"{ODD}::test_dots_that_group_thousands_are_refused_not_read_as_decimals",)),
    Mutant("tableread-header-line-read-as-ids", LT, "_refuse_header_read_as_data",
           "words.size == 1 and codes[0] == words[0] and int((codes == words[0]).sum()) == 1", "False",
           (f"{RULES}::test_a_header_less_reading_that_does_not_fit_the_file_says_which_way_to_turn",)),
    Mutant("tableread-joined-header-read-as-a-row", LT, "_skip_repeated_headers", "df.loc[~again]", "df",
           (f"{LOADERT}::test_a_header_alone_and_a_header_with_only_its_repeats_say_the_same_one_thing",)),
    Mutant("tableread-headerless-read-taken-for-headed", LT, "load_long_table", "_build(df, label, from_text)",
           "True", (f"{RULES}::test_a_header_less_reading_that_does_not_fit_the_file_says_which_way_to_turn",
                    f"{RULES}::test_a_header_read_as_data_is_named_after_a_sep_line_or_blank_lines"), arg="header"),
    Mutant("tableread-user-in-two-entities-accepted", LT, "_check_disjoint_users",
           "np.array_equal(lo[present], hi[present])", "True", (f"{LOADERT}::test_user_in_two_entities",)),
    Mutant("tableread-zero-values-kept", LT, "_drop_zeros", 't["v"].to_numpy() == 0', 't["v"].to_numpy() < 0',
           (f"{LOADERT}::test_zero_ratings_are_dropped",)),
    Mutant("tableread-summed-counts-over-bound-unnoted", LT, "_build", 'value_kind == "counts" and len(t) < n_rows',
           "False", (f"{TABLEREAD_READING}::test_an_event_log_whose_repeated_events_add_up_above_the_bound_is_noted_as_"
                     "the_eicu_loader_notes_it",)),
    Mutant("tableread-item-list-header-read-as-item", LT, "read_item_list",
           'read_list(source, what="item list", param="items", filename=filename, encoding=encoding, column=column)',
           'read_list(source, what="item list", param="items", filename=filename, encoding=encoding)',
           (f"{TABLEREAD_READING}::test_the_data_pages_item_list_takes_a_first_line_naming_the_item_column_as_its_"
            "header",)),
    Mutant("tableread-lists-ignore-the-declared-encoding", LT, "load_long_table",
           '_as_list_file(items, what="item list", param="items", encoding=encoding, column=item_col)',
           '_as_list_file(items, what="item list", param="items", column=item_col)',
           (f"{TABLEREAD_READING}::test_a_declared_encoding_reads_the_item_and_entity_lists_as_it_reads_the_table",)),
    Mutant("tableread-implicit-bound-kept-above-one", LT, "_build", "value_max = 1.0", "pass",
           (f"{LOADERT}::test_implicit_values_are_bounded_by_one_and_ratings_are_never_added_up",)),
    Mutant("tableread-item-name-column-ignored", LT, "_build", 't["name"] = nm.to_numpy()', "pass",
           (f"{RULES}::test_an_items_readable_name_is_the_first_seen_for_it",)),
    Mutant("tableread-own-items-counted-as-declared", LT, "_assemble",
           "len(catalogue) if extra.size else None", "None",
           (f"{RULES}::test_rows_of_items_outside_a_declared_catalogue_stay_their_entities_own_after_the_catalogue",)),
    Mutant("tableread-two-spellings-of-one-name", LT, "_one_spelling", "not odd.any()", "True",
           (f"{LISTST}::test_a_name_written_in_two_unicode_forms_or_with_invisible_characters_is_one_name",)),
    Mutant("tableread-separator-always-comma", TABLES, "_sniff_sep", 'best if counts[best] > 0 else ","', '","',
           (f"{LOADERT}::test_formats",)),
    Mutant("tableread-gzip-sniffed-compressed", TABLES, "_decompressed_head", 'raw_head[:2] != b"\\x1f\\x8b"', "True",
           (f"{LOADERT}::test_formats",)),
    Mutant("tableread-nul-past-the-head-missed", TABLES, "_first_nul", "offset + k", "None",
           (f"{LOADERT}::test_a_nul_byte_past_the_first_64_kib_is_refused_with_its_offset",)),
    Mutant("tableread-parquet-index-column-missing", TABLES, "_index_as_columns", "not names", "True",
           (f"{RULES}::test_a_parquet_column_pandas_stored_as_its_index_is_a_column_on_both_front_ends",)),
    Mutant("tableread-record-line-off-by-one", TABLES, "_record_lines", "reader.line_num + 1", "reader.line_num",
           (f"{RULES}::test_a_row_after_a_quoted_field_holding_a_line_break_is_named_by_its_own_line",)),
    Mutant("tableread-cr-cr-lf-read-as-two-lines", TABLES, "_one_line_end", 'f.read().replace(b"\\r\\r\\n", b"\\r\\n")',
           "f.read()",
           (f"{ODD}::test_rows_ending_in_cr_cr_lf_are_one_line_each_in_the_rows_and_lines_an_error_names",)),
    Mutant("tableread-unclosed-quote-a-line-early", TABLES, "_unclosed_quote_line",
           "start, done = done + 1, reader.line_num", "start, done = done, reader.line_num",
           (f"{ODD}::test_a_quote_never_closed_is_named_by_its_line_on_both_front_ends",)),
    Mutant("tableread-repeated-header-name-read", TABLES, "_refuse_repeated_names", "len(at) > 1", "False",
           (f"{ODD}::test_a_header_repeating_a_name_is_refused_on_upload_before_the_mapper_offers_a_made_up_name",)),
    Mutant("tableread-chunks-recode-seen-ids", TABLES, "_CodeBook.add",
           "self.index.get_indexer(uniq) if len(self.index) else np.full(len(uniq), -1)", "np.full(len(uniq), -1)",
           (f"{TABLEREAD_READING}::test_ids_repeated_across_the_chunks_a_large_table_is_read_in_are_one_id_each",)),
    Mutant("tableread-leading-blank-line-read-as-header", TABLES, "read_table",
           'lead.group(0).count(b"\\n") + (1 if hint else 0)', "1 if hint else 0",
           (f"{ODD}::test_blank_lines_before_the_header_are_skipped_and_lines_still_count_them",)),
    Mutant("tableread-entity-index-past-the-end", DATASET, "FederatedDataset.entity_index",
           "0 <= int(entity) < self.n_entities", "0 <= int(entity) <= self.n_entities",
           (f"{TABLEREAD_READING}::test_an_entity_is_found_by_name_or_index_and_one_outside_the_federation_is_named",)),
    Mutant("tableread-stored-zeros-counted", DATASET, "FederatedDataset.from_parts", "X.eliminate_zeros()", "None",
           (f"{TABLEREAD_READING}::test_a_stored_zero_is_no_interaction",)),
    Mutant("tableread-rows-out-of-entity-order-accepted", DATASET, "FederatedDataset.__post_init__",
           "n and np.any(np.diff(self.entity_of_user) < 0)", "False",
           (f"{TABLEREAD_READING}::test_a_dataset_refuses_rows_out_of_entity_order_and_a_declared_count_without_a_"
            "declared_catalogue",)),
    Mutant("tableread-declared-count-without-catalogue", DATASET, "FederatedDataset.__post_init__",
           'self.n_declared is not None and (self.item_source != "declared" or not 0 <= self.n_declared <= m)', "False",
           (f"{TABLEREAD_READING}::test_a_dataset_refuses_rows_out_of_entity_order_and_a_declared_count_without_a_"
            "declared_catalogue",)),
    Mutant("tableread-no-row-left-unsaid", LT, "_reject_or_drop_missing", "len(df) == 0", "False",
           (f"{TABLEREAD_READING}::test_leaving_out_rows_with_a_missing_value_that_leaves_no_row_says_so",)),
    Mutant("tableread-short-line-unexplained", LT, "_reject_or_drop_missing",
           "from_text is not False and len(empty) > 1", "from_text is not False and len(empty) > 2",
           (f"{ODD}::test_a_line_that_ends_early_is_named_as_possibly_short_not_only_as_an_empty_cell",)),
    Mutant("tableread-windows-export-read-as-latin-1", TABLES, "_whole_file_encoding",
           '"cp1252" if cp1252 else "latin-1"', '"latin-1"',
           (f"{ODD}::test_a_windows_export_is_read_as_windows_1252_not_as_latin_1",)),
    Mutant("tableread-option-of-another-source-ignored", LOADERS, "_only",
           "sorted((k for k in opts if k not in allowed))", "[]",
           (f"{RULES}::test_an_option_a_source_does_not_take_is_named_with_the_flags_it_does",)),
    Mutant("tableread-no-header-flag-ignored", LOADERS, "load_data", 'not opts.pop("no_header", False)',
           'opts.pop("no_header", False) is not None',
           (f"{RULES}::test_the_cli_reads_a_header_less_file_as_the_data_page_does_its_first_line_as_written",)),
    # what users read after a run: the report's sections and charts, the report command
    Mutant("readout-utility-chart-of-another-metric", RSECTIONS, "_utility", "[_f(r[headline]) for r in rows]",
           "[_f(r[metrics[-1]]) for r in rows]",
           (f"{READOUT_T}test_the_utility_chart_draws_each_methods_mar_as_its_table_states_it",)),
    Mutant("readout-provenance-sha-of-the-key-order", RSECTIONS, "_sha", "json.dumps(json_safe(doc), sort_keys=True)",
           "json.dumps(json_safe(doc))",
           (f"{READOUT_T}test_the_provenance_fingerprint_is_of_the_documents_content_whatever_its_key_order",)),
    Mutant("readout-public-non-private-run-called-dp", RSECTIONS, "_version_note", "not _is_private(run)", "False",
           (f"{READOUT_T}test_the_public_version_of_a_non_private_run_says_its_releases_are_exact",)),
    Mutant("readout-simulation-secagg-said-in-process", RSECTIONS, "trust_text",
           "'formed in-process' if t.get('in_process') else \"formed by Flower's SecAgg+\"", "'formed in-process'",
           (f"{READOUT_T}test_a_simulations_trust_model_says_where_its_secure_sum_was_formed",)),
    Mutant("readout-earlier-complete-sweep-called-partial", RSECTIONS, "_sweep_not_recorded",
           "sweep.get('complete') is False", "not sweep.get('complete')",
           (f"{READOUT_T}test_a_complete_sweep_of_an_earlier_version_without_a_store_record_is_not_called_partial",)),
    Mutant("readout-dp-release-said-to-void-a-guarantee", RSECTIONS, "void_lines", "void", "True",
           (f"{READOUT_T}test_a_dp_release_beside_the_run_leaves_every_entity_its_guarantee",), nth=1),
    Mutant("readout-simulation-first-screen-states-epsilon", RSECTIONS, "_overview", "_is_private(run) and not sim",
           "_is_private(run)",
           (f"{READOUT_T}test_a_simulations_first_screen_states_no_epsilon_one_person_is_protected_at",)),
    Mutant("readout-simulation-summary-states-a-guarantee", RSECTIONS, "_summary",
           "_is_private(run) and p.get('simulation')", "False",
           (f"{READOUT_T}test_the_summary_of_a_simulation_states_no_guarantee",)),
    Mutant("readout-ledger-epsilon-above-request-unflagged", RSECTIONS, "_privacy",
           "_f(p.get('epsilon')) <= _f(p.get('requested_epsilon')) * (1 + 1e-09)", "True",
           (f"{READOUT_T}test_a_ledger_epsilon_above_the_request_is_called_beyond_it",)),
    Mutant("readout-exact-comparison-ledgers-listed-as-dp", RSECTIONS, "_privacy", "_charge_kind(d) == 'dp'", "True",
           (f"{READOUT_T}test_only_a_dp_comparisons_ledger_rows_are_listed_as_its_released_dp_statistics",)),
    Mutant("readout-tradeoff-crossing-unmarked", RSECTIONS, "_tradeoff",
           "next((b for b in VERDICT_BASELINES if b in refs), None)", "None",
           (f"{READOUT_T}test_the_tradeoff_chart_marks_where_federation_pays_against_the_first_baseline_of_the_sweep",)),
    Mutant("readout-simulation-comparison-said-charged", RSECTIONS, "other_releases",
           "recorded_only and comparison is None", "False",
           (f"{READOUT_T}test_a_simulations_comparisons_on_generated_data_are_said_recorded_not_charged",)),
    Mutant("readout-uncharged-simulation-not-recorded", SERVICE, "_charge_record",
           "reservation.plans and all((p.simulation for p in reservation.plans))", "False",
           (f"{READOUT_T}test_a_simulations_comparisons_on_generated_data_are_said_recorded_not_charged",)),
    Mutant("readout-metrics-at-another-n-left-out", RSECTIONS, "run_metrics", "k.replace('_at_10', f'_at_{top_n}')",
           "k", (f"{READOUT_T}test_a_run_ranked_at_its_own_n_has_every_metric_the_command_line_printed",)),
    Mutant("readout-metric-at-another-n-headed-at-ten", RSECTIONS, "metric_label",
           "metric_at(metric, METRIC_LABELS)", "METRIC_LABELS.get(metric, metric)",
           (f"{READOUT_T}test_a_run_ranked_at_its_own_n_has_every_metric_the_command_line_printed",)),
    Mutant("readout-dp-reference-drawn-flat", PLOTS, "tradeoff_chart", "len(r) > 1", "False",
           (f"{READOUT_T}test_a_dp_reference_is_drawn_against_epsilon_and_an_exact_one_as_a_line",)),
    Mutant("readout-one-seed-hover-says-nan", PLOTS, "_sd_text", "np.isfinite(sd)", "True",
           (f"{READOUT_T}test_a_one_seed_sweep_says_its_spread_is_unknown_not_nan",)),
    Mutant("readout-cut-labels-merged", PLOTS, "_dedupe", "s if c == 0 else f'{s} ({c + 1})'", "s",
           (f"{READOUT_T}test_items_whose_names_share_a_long_prefix_keep_a_row_each_in_the_factor_chart",)),
    Mutant("readout-chart-labels-render-markup", PLOTS, "escape_text", "html.escape(str(text), quote=False)",
           "str(text)", (f"{READOUT_T}test_entity_names_are_inert_text_in_the_charts_labels",)),
    Mutant("readout-document-not-an-object-read-anyway", REPORT_CMD, "cmd_report", "not isinstance(doc, dict)",
           "False", (f"{READOUT_T}test_a_json_document_that_is_not_an_object_is_refused_naming_its_flag",)),
    Mutant("readout-utility-epsilon-of-the-run", RSECTIONS, "_utility", "fmt_eps(d.get('privacy', {}).get('epsilon'))",
           "fmt_eps(run.get('privacy', {}).get('epsilon'))", (f"{READOUT_T}test_from_json_files_and_cli",)),
    Mutant("readout-public-utility-printed", RSECTIONS, "_utility", "public", "False",
           (f"{READOUT_T}test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("readout-public-data-counts-printed", RSECTIONS, "_data", "public", "False",
           (f"{READOUT_T}test_public_report_holds_no_number_computed_on_private_data",), nth=0),
    Mutant("readout-public-sweep-utility-printed", RSECTIONS, "_tradeoff", "sweep and public", "False",
           (f"{READOUT_T}test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("readout-provenance-comparison-sha-of-the-run", RSECTIONS, "_provenance", "_sha(d)", "_sha(run)",
           (f"{READOUT_T}test_comparison_documents_given_beside_the_run_are_in_its_provenance",)),
    Mutant("readout-public-simulation-called-dp", RSECTIONS, "_version_note", "p.get('simulation')", "False",
           (f"{READOUT_T}test_a_simulation_run_calls_no_release_private_and_states_no_epsilon",)),
    Mutant("readout-simulation-trust-states-a-coalition-epsilon", RSECTIONS, "trust_text",
           "not privacy.get('simulation')", "True",
           (f"{READOUT_T}test_summary_states_the_trust_model_and_the_coalition_epsilon",)),
    Mutant("readout-most-spent-entity-called-every-entity", RSECTIONS, "_most_spent", "acct.get('every_entity_alike')",
           "True", (f"{READOUT_T}test_first_screen_in_plain_words",)),
    Mutant("readout-secure-audit-attacker-sees-one-release", RSECTIONS, "audit_attacker_view",
           "cfg.get('aggregation') == 'secure'", "False",
           (f"{READOUT_T}test_the_audit_section_says_what_the_attacker_of_each_kind_of_method_saw",)),
    Mutant("readout-local-listed-as-a-release", RSECTIONS, "_charge_kind", "model == 'NO_RELEASE'", "False",
           (f"{READOUT_T}test_every_release_the_spend_counts_is_named_in_both_versions_and_a_voided_entity_is_said",)),
    Mutant("readout-spend-after-without-a-store-figure", RSECTIONS, "_spend_after", "not acct.get('across_releases')",
           "False", (f"{READOUT_T}test_a_simulations_comparisons_on_generated_data_are_said_recorded_not_charged",)),
    Mutant("readout-simulation-release-called-private", RSECTIONS, "released_from_messages",
           "to_server and private and simulation", "False",
           (f"{READOUT_T}test_a_simulation_run_calls_no_release_private_and_states_no_epsilon",)),
    Mutant("readout-first-screen-coalition-is-the-servers", RSECTIONS, "_overview",
           "_f(coal.get('epsilon')) if secure and coal.get('epsilon') is not None else eps", "eps",
           (f"{READOUT_T}test_first_screen_in_plain_words",)),
    Mutant("readout-message-total-counts-only-what-was-sent", RSECTIONS, "_messages",
           "sum((int(mm.get('bytes', 0)) for mm in msgs))", "sum((d['bytes out'] for d in per.values()))",
           (f"{READOUT_T}test_what_is_released_and_who_sees_it_are_read_off_the_message_log_by_direction",)),
    Mutant("readout-empty-table-without-a-row", RFORMAT, "html_table", "not body", "False",
           (f"{READOUT_T}test_every_number_reads_one_way_and_document_text_is_escaped",)),
    Mutant("readout-roc-curves-of-every-target", RFIGURES, "audit_roc_figure", "r['target'] == chosen", "True",
           (f"{READOUT_T}test_the_audit_figures_label_non_private_runs_pick_a_target_by_kind_and_draw_infinity_right_"
            "of_the_grid",)),
    Mutant("readout-report-overwrites-its-input", REPORT_CMD, "cmd_report", "check_outputs(args, ('--out', args.out))",
           "None", ("tests/test_cli.py::test_the_report_never_writes_over_a_document_it_reads",)),
    Mutant("readout-sweep-of-another-store-mixed-in", REPORT_PY, "build_report",
           "{'--sweep': sweep_doc, '--audit': audit_doc}", "{'--audit': audit_doc}",
           (f"{READOUT_T}test_documents_charged_to_different_stores_are_not_reported_as_one_history",)),
    Mutant("readout-sweep-metric-unchecked", REPORT_PY, "build_report", "check_sweep_metric(sweep_doc, metric)",
           "None", (f"{READOUT_T}test_a_tradeoff_metric_the_sweep_did_not_measure_is_refused_naming_the_flag",)),
    Mutant("readout-audit-of-other-data-mixed-in", REPORT_PY, "build_report",
           "audit_doc is not None and not same_data(run_doc, audit_doc)", "False",
           (f"{READOUT_T}test_an_audit_of_other_data_is_refused_naming_its_flag",)),
    Mutant("readout-one-store-check-inverted", REPORT_PY, "check_one_store", "here and there and here != there",
           "here and there and here == there",
           (f"{READOUT_T}test_documents_charged_to_different_stores_are_not_reported_as_one_history",)),
    Mutant("readout-report-out-unchecked", REPORT_CMD, "cmd_report", "check_writable(args.out, suffix='.html')", "None",
           (f"{READOUT_T}test_a_report_out_that_cannot_be_written_is_refused_naming_out",)),
    Mutant("readout-k-of-one-called-a-maximum", RSECTIONS, "k_explanation", "int(k) <= 1", "int(k) < 1",
           (f"{READOUT_T}test_a_k_of_one_is_not_explained_as_a_maximum",)),
    Mutant("readout-public-scope-calls-counts-analyst-only", RSECTIONS, "_scope",
           "'withheld from this public version' if public else 'analyst only (exact, private)'",
           "'analyst only (exact, private)'", (f"{READOUT_T}test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("readout-many-entities-dots-descending", PLOTS, "metric_dots", "wide.sort_values(first, ascending=True)",
           "wide.sort_values(first, ascending=False)",
           ("tests/test_dashboard_engine.py::test_grouped_bars_up_to_the_limit_with_overall_last_and_dots_beyond_"
            "sorted_by_the_first_method",)),
    Mutant("readout-cumulative-spend-at-no-delta", RSECTIONS, "cumulative_text", "dlt", "None",
           (f"{READOUT_T}test_first_screen_in_plain_words",), nth=1),
    Mutant("readout-public-readers-row-of-the-analysts", RSECTIONS, "who_sees_what", "public", "False",
           (f"{READOUT_T}test_public_report_holds_no_number_computed_on_private_data",)),
    Mutant("readout-no-guarantee-in-words-as-a-factor", RSECTIONS, "epsilon_in_words", "not math.isfinite(eps)",
           "False", (f"{READOUT_T}test_no_guarantee_is_said_in_plain_words_as_no_protection",)),
    Mutant("readout-protocol-message-called-a-release", RSECTIONS, "released_from_messages", "shapes == ['no array']",
           "False", (f"{READOUT_T}test_what_is_released_and_who_sees_it_are_read_off_the_message_log_by_direction",)),
    Mutant("readout-float-sampler-unsaid", RSECTIONS, "_privacy",
           "any((x != PRODUCTION_SAMPLER_LABEL for x in p.get('samplers') or []))", "False",
           ("tests/test_privacy_labels.py::test_simulation_run_is_labelled_in_json_ledger_dashboard_and_report",)),
    Mutant("readout-run-alone-without-the-compare-hint", RSECTIONS, "_utility", "len(docs) == 1", "False",
           (f"{READOUT_T}test_a_run_without_comparisons_says_how_to_add_them",)),
    Mutant("readout-cli-undefined-metric-printed-nan", CLI_MAIN, "_metric_cell",
           "isinstance(value, (int, float)) and math.isfinite(value)", "isinstance(value, (int, float))",
           ("tests/test_cli.py::test_an_undefined_metric_is_printed_as_a_dash_never_nan",)),
    # the privacy budget as users set and read it: run configuration, the budget split, the budget command and pages
    Mutant("budgetcap-even-split-gives-each-stage-the-whole", BSPLIT, "split_evenly_over",
           "(s, float(share), len(stages))", "(s, float(share), 1)", (BUDGETCAP_SPLIT_FRACTIONS,)),
    Mutant("budgetcap-stage-sigma-of-the-whole-rho", BSPLIT, "SplitPlan.sigma", "self._rho_of(stage)",
           "self.rho_total", (BUDGETCAP_SPLIT_FRACTIONS,)),
    Mutant("budgetcap-stage-outside-the-split-not-named", BSPLIT, "SplitPlan._rho_of", "stage not in self.rho",
           "False", (BUDGETCAP_SPLIT_FRACTIONS,)),
    Mutant("budgetcap-each-stage-the-whole-delta", BSPLIT, "_plan", "delta / len(split.parts)", "delta",
           (f"{BST}::test_als_plan_is_unchanged_by_the_split",)),
    Mutant("budgetcap-stage-epsilon-at-the-whole-delta", BSPLIT, "SplitPlan.stage_epsilon",
           "zcdp_epsilon(rho, self.stage_delta)", "zcdp_epsilon(rho, self.delta)",
           (f"{BST}::test_als_plan_is_unchanged_by_the_split",)),
    Mutant("budgetcap-total-epsilon-at-a-stages-delta", BSPLIT, "SplitPlan.total_epsilon",
           "zcdp_epsilon(self.rho_total, self.delta)", "zcdp_epsilon(self.rho_total, self.stage_delta)",
           (f"{BST}::test_cooccurrence_plan_is_unchanged_by_the_split",)),
    Mutant("budgetcap-coalition-divisor-not-squared", BSPLIT, "SplitPlan.coalition_epsilon",
           "self.rho_total * divisor * divisor", "self.rho_total * divisor",
           (f"{BST}::test_a_multi_stage_share_states_the_coalition_epsilon_of_its_own_noise_shares",)),
    Mutant("budgetcap-run-epsilon-unchecked", CONFIG, "RunConfig.validate", "validate_budget(self.epsilon, self.delta)",
           "None", (f"{BUDGETCAP_RC}::test_a_budget_outside_its_range_is_refused_naming_epsilon_or_delta",)),
    Mutant("budgetcap-small-epsilon-names-the-grid", CONFIG, "RunConfig.validate", "check_epsilon(self.epsilon)",
           "check_epsilon(self.epsilon, 'epsilons')",
           (f"{BUDGETCAP_RC}::test_a_runs_epsilon_below_the_minimum_names_the_epsilon_setting",)),
    Mutant("budgetcap-one-beyond-the-largest-k-accepted", CONFIG, "RunConfig.validate", "getattr(self, name) > limit",
           "getattr(self, name) > limit + 1",
           (f"{BUDGETCAP_RC}::test_k_and_rank_are_accepted_up_to_their_limit_and_refused_one_beyond",)),
    Mutant("budgetcap-open-lower-bound-accepted", CONFIG, "Param.coerce", "self.low_open and value == self.low",
           "False", (BUDGETCAP_OPEN_BOUNDS,)),
    Mutant("budgetcap-open-upper-bound-accepted", CONFIG, "Param.coerce", "self.high_open and value == self.high",
           "False", (BUDGETCAP_OPEN_BOUNDS,)),
    Mutant("budgetcap-infinite-parameter-accepted", CONFIG, "Param.coerce", "not math.isfinite(value)", "False",
           (f"{BUDGETCAP_RC}::test_a_number_parameter_refuses_infinity_nan_and_booleans",)),
    Mutant("budgetcap-boolean-parameter-read-as-a-number", CONFIG, "Param.coerce", "isinstance(value, bool)", "False",
           (f"{BUDGETCAP_RC}::test_a_whole_number_parameter_refuses_booleans_infinity_and_fractions",)),
    Mutant("budgetcap-negative-split-share-accepted", CONFIG, "Param._coerce_mapping",
           "Param(self.name, 'float', 0.0, self.doc, low=0)", "Param(self.name, 'float', 0.0, self.doc)",
           (BUDGETCAP_SPLIT_PARAM,)),
    Mutant("budgetcap-split-share-of-an-unknown-stage-accepted", CONFIG, "Param._coerce_mapping",
           "self.choices and k not in self.choices", "False", (BUDGETCAP_SPLIT_PARAM,)),
    Mutant("budgetcap-main-setting-accepted-as-a-parameter", CONFIG, "check_params", "reserved and key in reserved",
           "False", (BUDGETCAP_RESERVED,)),
    Mutant("budgetcap-unknown-parameter-not-named", CONFIG, "check_params", "p is None", "False",
           (BUDGETCAP_RESERVED,)),
    Mutant("budgetcap-rating-level-epsilon-charged-as-user-level", BUDGET, "method_charges",
           "model.user_level and math.isfinite(epsilon)", "math.isfinite(epsilon)",
           (f"{BUDGETCAP_T}::test_each_methods_charge_follows_its_privacy_model",)),
    Mutant("budgetcap-comparison-recorded-as-a-run", BUDGET, "plan_run", "i == 0 and not comparison", "i == 0",
           (BUDGETCAP_RUN_PLAN,)),
    Mutant("budgetcap-method-compared-with-itself-charged-twice", BUDGET, "plan_run",
           "dict.fromkeys([config.method, *compare])", "[config.method, *compare]", (BUDGETCAP_RUN_PLAN,)),
    Mutant("budgetcap-resumed-sweep-points-charged-again", BUDGET, "plan_sweep",
           "job_key(m, e, int(seed), config.method) in done", "False", (BUDGETCAP_SWEEP_PLAN,)),
    Mutant("budgetcap-sweep-points-not-one-batch", BUDGET, "plan_sweep", "True", "False", (BUDGETCAP_SWEEP_PLAN,)),
    Mutant("budgetcap-audit-of-every-entitys-rows-charges-one", BUDGET, "plan_audit",
           "{n: (math.inf, 0.0) for n in dataset.entity_names} if all_entities else {name: (math.inf, 0.0)}",
           "{name: (math.inf, 0.0)}",
           (f"{BUDGETCAP_T}::test_an_audit_charges_the_audited_entity_or_every_entity_whose_rows_it_reads",)),
    Mutant("budgetcap-document-charge-of-its-largest-row", BUDGET, "ledger_charges", "a[0] += float(row['epsilon'])",
           "a[0] = max(a[0], float(row['epsilon']))",
           (f"{BUDGETCAP_T}::test_a_documents_charges_add_up_its_ledger_rows_per_entity_without_a_per_entity_summary",)),
    Mutant("budgetcap-unplanned-sweep-point-not-charged", BUDGET, "settle_sweep",
           "odometer.reserve(dataset, extra).close()", "None",
           (f"{BUDGETCAP_T}::test_a_sweep_point_its_plan_did_not_list_is_charged_after_it_ran",)),
    Mutant("budgetcap-store-skipped-when-one-plan-releases-nothing", BUDGET, "skip_store",
           "all((not p.charges for p in plans))", "any((not p.charges for p in plans))", (BUDGETCAP_SKIP_STORE,)),
    Mutant("budgetcap-store-skipped-when-one-plan-is-a-simulation", BUDGET, "skip_store",
           "all((p.simulation for p in plans))", "any((p.simulation for p in plans))", (BUDGETCAP_SKIP_STORE,)),
    Mutant("budgetcap-accountant-record-without-non-private-entities", BUDGET, "accountant_record",
           "[b.entity for b in bal if b.n_non_private > 0]", "[]",
           (f"{BUDGETCAP_T}::test_the_accountant_record_names_every_entity_a_non_private_release_reached",)),
    Mutant("budgetcap-simulation-on-records-said-private", BUDGET, "simulation_is_non_private",
           "not _generated(dataset)", "False",
           (f"{BUDGETCAP_T}::test_a_simulation_is_charged_as_non_private_on_peoples_records_and_not_on_a_generated_"
            "sample",)),
    Mutant("budgetcap-gaussian-at-delta-zero-accepted", BUDGET, "check_gaussian_delta", "delta <= 0", "delta < 0",
           (f"{BUDGETCAP_T}::test_a_gaussian_method_at_delta_zero_is_refused_naming_delta_and_a_non_private_or_"
            "laplace_one_is_not",)),
    Mutant("budgetcap-cli-raises-a-cap-unconfirmed", BUDGET_CMD, "cmd_budget",
           "odo.set_cap(key, args.epsilon, args.delta)", "True", (BUDGETCAP_RAISE,), arg="confirm_raise"),
    Mutant("budgetcap-cli-cap-removal-said-set", BUDGET_CMD, "cmd_budget", "math.isinf(args.epsilon)", "False",
           (BUDGETCAP_RAISE,)),
    Mutant("budgetcap-cap-delta-read-by-python-float", BUDGET_CMD, "register_cli", "s.add_argument('--delta')", "float",
           (f"{BUDGETCAP_T}::test_set_cap_reads_its_delta_as_every_number_flag_and_refuses_what_python_alone_would_"
            "take",), arg="type"),
    Mutant("budgetcap-cli-cap-set-rounded-to-nearest", BUDGET_CMD, "cmd_budget", "epsilon_left(args.epsilon)",
           "format(args.epsilon, 'g')",
           (f"{BUDGETCAP_T}::test_set_cap_and_its_change_log_never_state_a_cap_above_the_one_set",)),
    Mutant("budgetcap-cli-releases-limit-ignored", BUDGET_CMD, "cmd_budget", "odo.releases(key, limit=args.limit)",
           "odo.releases(key)", (BUDGETCAP_READS,)),
    Mutant("budgetcap-cli-read-creates-a-missing-store", BUDGET_CMD, "_no_store",
           "path.exists() or path.is_symlink() or own_key_left(path) is not None", "True", (BUDGETCAP_READS,)),
    Mutant("budgetcap-cap-log-raise-unmarked", BUDGET_CMD, "cap_change_lines",
           "'  (raised, confirmed)' if r['raised'] else ''", "''", (BUDGETCAP_RAISE,)),
    Mutant("budgetcap-cap-log-older-changes-unsaid", BUDGET_CMD, "cap_change_lines", "len(rows) > limit", "False",
           (BUDGETCAP_LOG,)),
    Mutant("budgetcap-cap-log-rounded-up", BUDGET_CMD, "cap_change_lines", "epsilon_left(r['new_epsilon'])",
           "epsilon_that_holds(r['new_epsilon'])",
           (f"{BUDGETCAP_T}::test_set_cap_and_its_change_log_never_state_a_cap_above_the_one_set",)),
    Mutant("budgetcap-dry-run-cap-rounded-up", BUDGET_CMD, "dry_run", "epsilon_left(p['cap_epsilon'])",
           "epsilon_that_holds(p['cap_epsilon'])",
           (f"{BUDGETCAP_T}::test_a_dry_run_states_the_spend_after_it_rounded_up_and_the_cap_rounded_down",), nth=0),
    Mutant("budgetcap-dry-run-non-private-cap-rounded-up", BUDGET_CMD, "dry_run", "epsilon_left(p['cap_epsilon'])",
           "epsilon_that_holds(p['cap_epsilon'])",
           (f"{BUDGETCAP_T}::test_a_dry_run_of_a_non_private_release_states_the_dp_spend_up_and_the_cap_down",), nth=1),
    Mutant("budgetcap-dry-run-spend-rounded-down", BUDGET_CMD, "dry_run", "epsilon_that_holds(p['after'])",
           "epsilon_left(p['after'])",
           (f"{BUDGETCAP_T}::test_a_dry_run_states_the_spend_after_it_rounded_up_and_the_cap_rounded_down",)),
    Mutant("budgetcap-dry-run-allows-dp-releases-past-the-cap", BUDGET_CMD, "dry_run", "allowed and p['dp_fits']",
           "allowed", (f"{BUDGETCAP_T}::test_a_dry_run_allowed_to_release_non_private_data_is_still_refused_when_its_"
                       "dp_releases_pass_the_cap",)),
    Mutant("budgetcap-charged-release-not-kept", BUDGET_CMD, "record_release", "history.add(kind, doc)", "None",
           (f"{BUDGETCAP_T}::test_a_charged_release_is_kept_in_the_history_with_its_operation",)),
    Mutant("budgetcap-planned-charge-cap-rounded-up", BUDGET, "charge_text", "epsilon_left(p['cap_epsilon'])",
           "epsilon_that_holds(p['cap_epsilon'])", (BUDGETCAP_CAP_SHOWN,), nth=0),
    Mutant("budgetcap-planned-charge-non-private-cap-rounded-up", BUDGET, "charge_text",
           "epsilon_left(p['cap_epsilon'])", "epsilon_that_holds(p['cap_epsilon'])", (BUDGETCAP_CAP_SHOWN,), nth=1),
    Mutant("budgetcap-cap-refusal-silent-on-its-smaller-delta", ODO, "BudgetOdometer.set_cap",
           "math.isfinite(old_d) and delta < old_d", "False",
           (f"{BUDGETCAP_T}::test_a_cap_refused_below_the_spend_at_its_smaller_delta_says_the_spend_is_stated_at_"
            "that_delta",), nth=0),
    Mutant("budgetcap-dashboard-refusal-names-cli-flags", UI_BUDGET, "refusal_text", "exc.render(DASH_CONTROLS)",
           "str(exc)", (BUDGETCAP_DASH_CHARGE,)),
    Mutant("budgetcap-dashboard-charge-allows-non-private", UI_BUDGET, "charge",
           "BudgetOdometer(store).charge(dataset, plans)", "True", (BUDGETCAP_DASH_CHARGE,), arg="allow_non_private"),
    Mutant("budgetcap-budget-view-of-the-loaded-data-not-the-key", UI_BUDGET, "_read_key", "key or content", "content",
           (f"{BUDGETCAP_T}::test_the_budget_view_reads_the_account_of_the_key_it_is_given",)),
    Mutant("budgetcap-audit-charges-only-the-audited-entity", UI_BUDGET, "charged_audit",
           "audit_kwargs.get('others') == 'data' and any((is_summable(m) for m in methods))", "False",
           (f"{BUDGETCAP_T}::test_an_audit_that_reads_every_entitys_rows_charges_every_entity",)),
    Mutant("budgetcap-dashboard-larger-delta-not-a-raise", UI_BUDGET, "render_budget",
           "new_e > cap_e or new_d > view['cap_delta']", "new_e > cap_e",
           (f"{BUDGETCAP_T}::test_the_dashboard_asks_to_confirm_a_larger_delta_as_a_raise",)),
    Mutant("budgetcap-dashboard-cap-form-refuses-a-small-cap", UI_BUDGET, "render_budget",
           "0.01 if math.isinf(cap_e) or cap_e >= 0.01 else min(MIN_EPSILON, float(cap_e))", "0.01",
           (BUDGETCAP_FORM_RANGE,)),
    Mutant("budgetcap-dashboard-cap-form-refuses-a-large-delta", UI_BUDGET, "render_budget",
           "max(0.0099, float(view['cap_delta']))", "0.0099", (BUDGETCAP_FORM_RANGE,)),
    Mutant("budgetcap-dashboard-cap-rounded-up", UI_BUDGET, "_cap_words", "epsilon_left(cap_epsilon)",
           "epsilon_that_holds(cap_epsilon)", (f"{BUDGETCAP_T}::test_the_dashboards_cap_is_never_shown_above_the_one_set",)),
    # what the budget commands read: a spend rounded up, what is left rounded down, a refusal read as one
    Mutant("budgetread-planned-spend-rounded-down", BUDGET, "charge_text", "epsilon_that_holds(float(x), 3)",
           "epsilon_left(float(x), 3)", (BUDGETREAD_ROUNDING,)),
    Mutant("budgetread-planned-left-rounded-up", BUDGET, "charge_text", "epsilon_left(float(x), 3)",
           "epsilon_that_holds(float(x), 3)", (BUDGETREAD_ROUNDING,)),
    Mutant("budgetread-no-run-left-read-as-a-count", BUDGET, "runs_left_text", "n <= 0", "n < 0",
           (BUDGETREAD_RUNS_LEFT,)),
    Mutant("budgetread-one-run-left-in-the-plural", BUDGET, "runs_left_text", "'fits' if n == 1 else 'fit'",
           "'fit'", (BUDGETREAD_RUNS_LEFT,)),
    Mutant("budgetread-show-prints-an-empty-table", BUDGET_CMD, "print_balance", "not bal", "False",
           (f"{ODOT}::test_budget_show_of_data_nothing_was_charged_to_says_so_instead_of_an_empty_table",)),
    Mutant("budgetread-finite-cap-delta-range-includes-zero", ODO, "BudgetOdometer.set_cap",
           "'(0, 0.01)' if math.isfinite(epsilon) else '[0, 0.01)'", "'[0, 0.01)'",
           (f"{ODOT}::test_a_finite_cap_states_the_delta_range_it_accepts",)),
    Mutant("budgetread-dashboard-no-run-left-as-a-count", UI_BUDGET, "render_budget", "runs_left_text(left)",
           "f\"{left['n']} more like the last one\"",
           (f"{BUDGETCAP_T}::test_the_dashboard_says_when_no_run_like_the_last_fits_under_the_cap",)),
    # quality numbers: a rank, a candidate set, a split, a fit or a catalogue map that is wrong reads as a
    # plausible MAR, precision or RMSE; each of these is caught by a test of the number it changes
    Mutant("quality-mar-rank-over-every-candidate", METRICS, "ranking_metrics", "np.maximum(n_cand[te_rows] - 1, 1)",
           "np.maximum(n_cand[te_rows], 1)", (RANK_DEFS,)),
    Mutant("quality-mar-ties-count-whole", METRICS, "ranking_metrics", "greater + 0.5 * equal", "greater + equal",
           (f"{QUALITY_METRICST}::test_constant_scorer_gets_half_and_perfect_scorer_zero",)),
    Mutant("quality-mar-tie-with-itself", METRICS, "ranking_metrics", "np.sum(rowS == sh, axis=1) - 1",
           "np.sum(rowS == sh, axis=1)",
           (f"{QUALITY_METRICST}::test_constant_scorer_gets_half_and_perfect_scorer_zero",)),
    Mutant("quality-seen-items-ranked", METRICS, "ranking_metrics", "S[tr_rows, tr.indices] = -np.inf", "pass",
           (RANK_DEFS,)),
    Mutant("quality-candidates-count-seen-items", METRICS, "ranking_metrics", "m - np.diff(tr.indptr)",
           "np.full(b, m)", (RANK_DEFS,)),
    Mutant("quality-mar-unweighted-by-value", METRICS, "ranking_metrics",
           "np.bincount(te_rows, weights=te_vals * rank, minlength=b)", "rank",
           (f"{QUALITY_METRICST}::test_mar_hand_computed_with_ties",), arg="weights"),
    Mutant("quality-ndcg-discount-off-by-one", METRICS, "ranking_metrics", "np.arange(2, n_eff + 2)",
           "np.arange(3, n_eff + 3)", (RANK_DEFS,)),
    Mutant("quality-precision-over-the-catalogue-cut", METRICS, "ranking_metrics", "np.where(has, n_hits / n, 0.0)",
           "np.where(has, n_hits / n_eff, 0.0)", (RANK_DEFS,)),
    Mutant("quality-top-n-ties-to-the-higher-item", METRICS, "top_n_stable",
           "np.cumsum(tied, axis=1, dtype=np.int32)", "np.cumsum(tied[:, ::-1], axis=1, dtype=np.int32)[:, ::-1]",
           (f"{QUALITY_METRICST}::test_top_n_partial_sort_equals_the_stable_full_sort",)),
    Mutant("quality-train-rmse-over-test-users-only", METRICS, "evaluate.summarise",
           "ratio(tr_sse[mask].sum(), tr_cnt[mask].sum())", "ratio(tr_sse[t].sum(), tr_cnt[t].sum())",
           (ENTITY_SUMS_COMBINED,)),
    Mutant("quality-recall-averaged-over-every-user", METRICS, "evaluate.summarise",
           "ratio(per_user['recall'][t].sum(), nt)", "ratio(per_user['recall'][t].sum(), mask.sum())",
           (POOLED,)),
    Mutant("quality-ndcg-of-users-without-hidden-entries", METRICS, "evaluate.summarise",
           "ratio(per_user['ndcg'][t].sum(), nt)", "ratio(per_user['ndcg'][mask].sum(), mask.sum())",
           (POOLED,)),
    Mutant("quality-observed-train-rmse-over-every-cell", METRICS, "_row_train_sse",
           "np.diff(train.indptr).astype(float)", "np.full(n, float(m))",
           (f"{QUALITY_METRICST}::test_evaluate_per_entity_and_overall",)),
    Mutant("quality-zero-train-rmse-over-stored-cells", METRICS, "_row_train_sse", "np.full(n, float(m))",
           "np.diff(train.indptr).astype(float)", (f"{QUALITY_METRICST}::test_evaluate_per_entity_and_overall",)),
    Mutant("quality-streamed-block-reads-other-users-factors", METRICS, "evaluate",
           "U_b[a - sl.start:b - sl.start]", "U_b[a:b]", (QUALITY_OWN_MODE,)),
    Mutant("quality-streamed-seen-rows-of-another-block", METRICS, "evaluate", "train[idx + sl.start]",
           "train[idx]", (QUALITY_OWN_MODE,)),
    Mutant("quality-jaccard-union-double-counts-hits", METRICS, "set_metrics", "hits / (topn + n_hidden - hits)",
           "hits / (topn + n_hidden)", (f"{QUALITY_SETT}::test_hand_example",)),
    Mutant("quality-pr-auc-precision-off-by-one", METRICS, "set_metrics", "cum / (pos + 1)", "cum / (pos + 2)",
           (f"{QUALITY_SETT}::test_pr_auc_matches_sklearn",)),
    Mutant("quality-set-seen-items-recommended", METRICS, "set_metrics", "S[rows_t, train.indices] = -np.inf",
           "pass", (f"{QUALITY_SETT}::test_hand_example",)),
    # the split
    Mutant("quality-split-eligible-with-n-hidden-entries", SPLIT, "split_users", "nnz_row >= n_hidden + 1",
           "nnz_row >= n_hidden", (f"{SPLITT}::test_users_with_few_entries_never_tested",)),
    Mutant("quality-split-hides-one-more", SPLIT, "split_users", "pos_in_row < n_hidden", "pos_in_row <= n_hidden",
           (f"{SPLITT}::test_split_invariants",)),
    Mutant("quality-split-not-stratified-per-entity", SPLIT, "split_users", "np.lexsort((key, entity_of_user))",
           "np.lexsort((entity_of_user, key))", (QUALITY_SPLIT_ROUNDED,)),
    Mutant("quality-split-quota-of-the-first-entity", SPLIT, "split_users", "quota[entity_of_user]", "quota[0]",
           (QUALITY_SPLIT_ROUNDED,)),
    Mutant("quality-split-hidden-entries-by-column", SPLIT, "split_users", "np.lexsort((ekey[sel], sel_rows))",
           "np.lexsort((X.indices[sel], sel_rows))",
           (f"{SPLITT}::test_test_users_and_hidden_entries_are_drawn_uniformly",)),
    Mutant("quality-quota-eligible-with-n-hidden-entries", SPLIT, "entity_test_quota", "lengths >= n_hidden + 1",
           "lengths >= n_hidden", (QUALITY_SPLIT_KNOWN,)),
    Mutant("quality-quota-rounded-up", SPLIT, "entity_test_quota", "np.rint(test_fraction * sizes)",
           "np.ceil(test_fraction * sizes)", (QUALITY_SPLIT_KNOWN,)),
    Mutant("quality-test-users-count-the-quota-alone", SPLIT, "n_test_users", "np.minimum(eligible, quota)", "quota",
           (QUALITY_SPLIT_KNOWN,)),
    Mutant("quality-training-rows-count-hidden-entries", SPLIT, "TrainRows.__init__", "int(X.nnz - self.hidden.size)",
           "int(X.nnz)", (f"{SPLITT}::test_training_rows_read_any_way_are_the_training_matrix",)),
    Mutant("quality-given-split-keeps-stored-zeros", SPLIT, "Split.of", "train.sum_duplicates()", "pass",
           (f"{SPLITT}::test_a_repeated_cell_counts_as_one_entry_of_its_user",)),
    # the dataset
    Mutant("quality-ds-entity-slice-drops-its-last-user", DATASET, "FederatedDataset.entity_slices",
           "slice(int(bounds[h]), int(bounds[h + 1]))", "slice(int(bounds[h]), int(bounds[h + 1]) - 1)",
           (QUALITY_DS_ROWS,)),
    Mutant("quality-ds-user-ids-not-reordered", DATASET, "FederatedDataset.from_parts", "uid[order]", "uid",
           (QUALITY_DS_ROWS,)),
    Mutant("quality-ds-implicit-default-bound-5", DATASET, "FederatedDataset.from_parts", "value_max = 1.0",
           "value_max = 5.0", (QUALITY_DS_BOUND,)),
    Mutant("quality-ds-stored-zeros-are-interactions", DATASET, "FederatedDataset.from_parts", "X.eliminate_zeros()",
           "pass", (QUALITY_DS_ROWS,)),
    Mutant("quality-ds-label-between-declared-entities-accepted", DATASET, "FederatedDataset.from_parts",
           "(codes >= len(names)) | (names[np.minimum(codes, len(names) - 1)] != labels)", "codes >= len(names)",
           (QUALITY_DS_LABEL,)),
    Mutant("quality-ds-entity-index-one-past-the-end", DATASET, "FederatedDataset.entity_index",
           "0 <= int(entity) < self.n_entities", "0 <= int(entity) <= self.n_entities", (QUALITY_DS_INDEX,)),
    Mutant("quality-ds-full-catalogue-said-partial", DATASET, "FederatedDataset.shared_columns",
           "self.n_declared >= self.n_items", "self.n_declared > self.n_items", (QUALITY_DS_CATALOGUE,)),
    Mutant("quality-ds-selected-names-not-selected", DATASET, "FederatedDataset.select_items",
           "self.item_names[cols]", "self.item_names[:cols.size]", (QUALITY_DS_SELECT,)),
    Mutant("quality-ds-selected-features-not-selected", DATASET, "FederatedDataset.select_items",
           "self.item_features[cols]", "self.item_features[:cols.size]", (QUALITY_DS_SELECT,)),
    Mutant("quality-ds-zero-value-bound-accepted", DATASET, "FederatedDataset.__post_init__",
           "0 < self.value_max <= 1e9",
           "0 <= self.value_max <= 1e9", (QUALITY_DS_BOUND,)),
    # the factorisation
    Mutant("quality-fit-converges-relative-to-f-itself", FACTOR, "converged", "tol * (history[0] - history[-1])",
           "tol * history[-1]", (QUALITY_FIT_CONVERGES,)),
    Mutant("quality-fit-never-converges", FACTOR, "converged",
           "history[-2] - history[-1] <= tol * (history[0] - history[-1])",
           "history[-2] - history[-1] < 0", (f"{FACTORT}::test_converged_is_the_decrease_against_the_progress_made",)),
    Mutant("quality-zero-fit-ignores-its-convergence-rule", FACTOR, "fit_nmf", "converged(history, tol)", "False",
           (QUALITY_FIT_CONVERGES,)),
    Mutant("quality-observed-fit-ignores-its-convergence-rule", FACTOR, "_observed_fit", "converged(history, tol)",
           "False", (QUALITY_FIT_CONVERGES,)),
    Mutant("quality-hals-without-ridge", FACTOR, "_hals_column", "B[r, r] + lam", "B[r, r]",
           (f"{FACTORT}::test_row_fit_matches_brute_force_nnls",)),
    Mutant("quality-hals-not-projected", FACTOR, "_hals_column", "np.maximum(num, 0.0, out=num)", "pass",
           (f"{FACTORT}::test_objective_never_increases",)),
    Mutant("quality-objective-cross-term-once", FACTOR, "objective", "xx - 2 * cross + quad + reg",
           "xx - cross + quad + reg", (QUALITY_PRODUCTS,)),
    Mutant("quality-objective-from-products-ridge-of-w-only", FACTOR, "objective_from_products",
           "float(np.sum(W * W)) + float(np.sum(H * H))", "float(np.sum(W * W))", (QUALITY_PRODUCTS,)),
    Mutant("quality-observed-sweep-without-ridge", FACTOR, "_observed_sweeps",
           "np.where(diag + lam > 0, diag + lam, np.inf)", "np.where(diag > 0, diag, np.inf)",
           (f"{FACTORT}::test_row_fit_matches_brute_force_nnls",)),
    Mutant("quality-observed-history-without-ridge", FACTOR, "_observed_fit",
           "float(resid_t @ resid_t) + lam * (float(np.sum(U * U)) + float(np.sum(V * V)))",
           "float(resid_t @ resid_t)", (f"{FACTORT}::test_objective_never_increases",)),
    Mutant("quality-rank-zero-accepted", FACTOR, "fit_nmf", "rank < 1", "rank < 0",
           (f"{FACTORT}::test_bad_parameters",)),
    # the catalogue map
    Mutant("quality-shared-keys-shifted-by-one", QUALITY_SHARED_PY, "SharedItems.from_columns",
           "np.arange(columns.size)",
           "np.arange(1, columns.size + 1)", (QUALITY_SHARED,)),
    Mutant("quality-lift-reads-item-rows-not-key-rows", QUALITY_SHARED_PY, "SharedItems.lift", "F[self.item_key[rows]]",
           "F[rows]", (QUALITY_SHARED,)),
    Mutant("quality-projection-not-clipped", QUALITY_SHARED_PY, "SharedItems.project",
           "merge_key_columns(X, self.key_matrix(), self.value_max)", "np.inf", (QUALITY_SHARED,), arg=2),
    # the planner
    Mutant("quality-planner-higher-is-better-target-above-reference", PLANNER, "epsilon_for_utility",
           "ref * (1 + tolerance) if lower else ref * (1 - tolerance)",
           "ref * (1 + tolerance) if lower else ref * (1 + tolerance)", (QUALITY_PLAN_TARGET,)),
    Mutant("quality-planner-points-in-sweep-order", PLANNER, "epsilon_for_utility",
           "table[table['method'] == method].sort_values('epsilon')", "table[table['method'] == method]",
           (QUALITY_PLAN_TARGET,)),
    Mutant("quality-planner-crossing-on-a-linear-scale", PLANNER, "_users_to_pay",
           "np.log(np.array([p['users'] for p in pts], float))", "np.array([p['users'] for p in pts], float)",
           (QUALITY_PLAN_CROSSING,)),
    Mutant("quality-planner-spread-ignored", PLANNER, "_users_to_pay", "y - np.where(np.isfinite(sd), sd, 0.0)", "y",
           (QUALITY_PLAN_CROSSING,)),
    Mutant("quality-planner-flat-trend-extrapolated", PLANNER, "_users_to_pay", "not math.isfinite(users)",
           "slope <= 0", (QUALITY_PLAN_FLAT,)),
    # the audit's targets
    Mutant("quality-audit-worst-case-on-the-most-used-items", AUDIT_TARGETS, "worst_case_row",
           "np.lexsort((np.arange(m), col_count))[:s]", "np.lexsort((np.arange(m), col_count))[-s:]",
           (QUALITY_TARGETS,)),
    Mutant("quality-audit-outlier-is-the-nearest-user", AUDIT_TARGETS, "make_targets", "np.argmax(nn)",
           "np.argmin(nn)", (QUALITY_TARGETS,)),
    Mutant("quality-audit-typical-is-the-farthest-on-average", AUDIT_TARGETS, "make_targets", "np.argmin(mean)",
           "np.argmax(mean)", (QUALITY_TARGETS,)),
    Mutant("quality-audit-real-rows-not-clipped", AUDIT_TARGETS, "make_targets",
           "np.clip(Xc.data, 0.0, value_max, out=Xc.data)", "pass", (QUALITY_TARGETS,)),
    Mutant("quality-audit-pair-swapped", AUDIT_TARGETS, "neighbouring_pair", "(X[keep], X)", "(X, X[keep])",
           (QUALITY_TARGETS,)),
    Mutant("quality-audit-two-users-too-few", AUDIT_TARGETS, "too_few_users", "n_users < MIN_USERS_FOR_REAL_TARGET",
           "n_users <= MIN_USERS_FOR_REAL_TARGET", (QUALITY_TWO_USERS,)),
    Mutant("quality-audit-empty-support-target", AUDIT_TARGETS, "worst_case_row", "max(support, 1)", "support",
           (QUALITY_SUPPORT,)),
    Mutant("quality-set-ties-to-the-higher-item", METRICS, "set_metrics", "np.broadcast_to(np.arange(m), (b, m))",
           "np.broadcast_to(-np.arange(m), (b, m))", (QUALITY_SET_TIES,)),
    Mutant("quality-split-hidden-entries-kept-in-training", SPLIT, "split_users", "TrainRows(X, np.flatnonzero(hide))",
           "TrainRows(X, np.zeros(0, dtype=np.int64))", (f"{SPLITT}::test_split_invariants",)),
    Mutant("quality-split-ineligible-users-take-test-places", SPLIT, "split_users", "key[~eligible] = np.inf", "pass",
           (f"{SPLITT}::test_split_invariants",)),
    Mutant("quality-lift-onto-names-the-site-never-held", QUALITY_SHARED_PY, "SharedItems.lift",
           "rows = rows[np.asarray(known, dtype=bool)[rows]]", "pass",
           (f"{SITEMS}::test_a_site_maps_released_keys_back_onto_the_item_names_it_holds_only",)),
    Mutant("quality-public-catalogue-lifted-onto-held-names-only", QUALITY_SHARED_PY, "SharedItems.site_lift",
           "None if self.public else known_items(X_site)", "known_items(X_site)",
           (f"{SITEMS}::test_a_declared_catalogue_that_leaves_items_out_reaches_every_declared_item_of_every_site",)),
    Mutant("quality-audit-self-distance-of-the-chunks-first-rows", AUDIT_TARGETS, "nearest_neighbour_stats",
           "D[np.arange(e - s), np.arange(s, e)] = np.inf", "D[np.arange(e - s), np.arange(e - s)] = np.inf",
           (f"{AUDT}::test_nearest_and_mean_distances_are_those_to_the_other_users_hand_checked",)),
    Mutant("quality-planner-infinite-epsilon-planned", PLANNER, "epsilon_for_utility", "finite[i]", "True",
           (QUALITY_PLAN_NONE,)),
    Mutant("quality-hals-zero-over-zero-without-ridge", FACTOR, "_hals_column", "denom if denom > 0 else np.inf",
           "denom", (QUALITY_NO_RIDGE_COLUMN,)),
    Mutant("quality-observed-zero-over-zero-without-ridge", FACTOR, "_observed_sweeps",
           "np.where(diag + lam > 0, diag + lam, np.inf)", "diag + lam", (QUALITY_NO_RIDGE_ITEM,)),
    Mutant("quality-training-block-drops-the-entry-before", SPLIT, "TrainRows.block",
           "np.searchsorted(gone - np.arange(gone.size), drop, side='right')",
           "np.searchsorted(gone - np.arange(gone.size), drop, side='left')", (QUALITY_TRAIN_ROWS,)),
    Mutant("quality-kept-entries-row-pointers-not-summed", SPLIT, "keep_entries", "indptr[1:] -= np.cumsum(per_row)",
           "indptr[1:] -= per_row",
           (f"{SPLITT}::test_keep_entries_is_the_matrix_of_the_kept_entries_empty_rows_included",)),
    Mutant("quality-training-row-from-the-end-misread", SPLIT, "TrainRows.__getitem__", "int(key) % self.shape[0]",
           "int(key)", (QUALITY_TRAIN_ROWS,)),
    # dp-prototypes, its mechanisms and the protocol: understated sensitivities, bounds not applied,
    # budget splits that do not add up, releases not charged, private counts shaping a message
    Mutant("fedproto-size-count-sensitivity-halved", DPP, "DPPrototypes._release",
           "mech.count_mechanism(n, 1, e_size, rng)", "0.5", (FEDPROTO_COUNT_ROWS,), arg=1),
    Mutant("fedproto-recovery-count-sensitivity-halved", DPP, "DPPrototypes._recover",
           "mech.count_mechanism(true_n, 1, eps_cnt, rng)", "0.5", (FEDPROTO_COUNT_ROWS,), arg=1),
    Mutant("fedproto-clipped-entries-discarded", DPP, "DPPrototypes._preprocess",
           "np.clip(Xc.data, vmin, vmax, out=Xc.data)", "np.clip(Xc.data, vmin, vmax)",
           (f"{NB}::test_dp_recovery_bounds_are_public_and_entries_clipped",)),
    Mutant("fedproto-plan-size-share-not-taken-out", DPP, "DPPrototypes.budget_plan",
           "eps * (1 - f_size) * v / total * (1 - 1e-12)", "eps * v / total * (1 - 1e-12)",
           (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-trial-candidates-epsilon-not-divided", DPP, "DPPrototypes._release",
           "plan['candidates'] / T_r", "plan['candidates']", (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-trial-candidates-delta-not-divided", DPP, "DPPrototypes._release",
           "delta * dc / T_r * (1 - 1e-12)", "delta * dc * (1 - 1e-12)", (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-recovery-epsilon-not-shared-by-refinements", DPP, "DPPrototypes._release",
           "plan[x] / T_r / (R + 1)", "plan[x] / T_r", (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-sums-delta-takes-the-candidates-share", DPP, "DPPrototypes._release",
           "delta * (1 - dc) / T_r / (R + 1) * (1 - 1e-12)", "delta * dc / T_r / (R + 1) * (1 - 1e-12)",
           (FEDPROTO_DELTA_SPLIT,)),
    Mutant("fedproto-candidates-delta-ignores-its-share", DPP, "DPPrototypes._release",
           "delta * dc / T_r * (1 - 1e-12)", "delta / T_r * (1 - 1e-12)", (FEDPROTO_DELTA_SPLIT,)),
    Mutant("fedproto-recovery-counts-and-sums-shares-swapped", DPP, "DPPrototypes._release",
           "('counts', 'support', 'sums')", "('sums', 'support', 'counts')",
           (f"{DPPT}::test_dp_release_shapes_bounds_and_support",), nth=0),
    Mutant("fedproto-one-cluster-counts-and-sums-swapped", DPP, "DPPrototypes._release",
           "('counts', 'support', 'sums')", "('sums', 'support', 'counts')", (FEDPROTO_RANDOM_CONFIGS,), nth=1),
    Mutant("fedproto-candidates-padded-with-user-rows", DPP, "DPPrototypes._release",
           "clip_rows(rng.standard_normal((k - C.shape[0], p)) * lam / math.sqrt(p), lam)",
           "Y[:k - C.shape[0]]", (FEDPROTO_PADDING,)),
    Mutant("fedproto-cluster-count-from-the-labels-used", DPP, "DPPrototypes._recover",
           "cluster_indicator(labels, k)", "cluster_indicator(labels, int(labels.max()) + 1)",
           (f"{DPPT}::test_dp_same_seed_same_release_and_no_dependence_on_k_vs_n",)),
    Mutant("fedproto-automatic-k-from-the-true-user-count", DPP, "DPPrototypes._release",
           "self.effective_k(self.n_hat_)", "self.effective_k(float(n))", (FEDPROTO_AUTO_K,)),
    Mutant("fedproto-size-stage-only-for-the-projection", DPP, "DPPrototypes._size_stage_runs",
           "self.projection_dim is None or self.cluster_size is not None", "self.projection_dim is None",
           (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-trial-choice-charged-the-search-share", DPP, "DPPrototypes._release",
           "plan['choice'] if private else math.inf", "plan['search'] if private else math.inf", (STAGE_ROWS,)),
    Mutant("fedproto-gaussian-sums-of-unscaled-rows", DPP, "DPPrototypes._recover",
           "recover_gaussian(np.asarray((A @ Xs).todense()), denom, s, lam)", "np.asarray((A @ Xc).todense())",
           (FEDPROTO_SUMS_AUDIT,), arg=0),
    Mutant("fedproto-paper-sums-of-scaled-rows", DPP, "DPPrototypes._recover",
           "recover_paper(np.asarray((A @ Xc).todense()), denom, s, bound)", "np.asarray((A @ Xs).todense())",
           (FEDPROTO_SUMS_AUDIT,), arg=0),
    Mutant("fedproto-lsh-threshold-from-the-true-user-count", DPP, "DPPrototypes._release_lsh",
           "coresets.leaf_threshold(m, sigma_pub, lam, float(self.lsh_node_factor))", "n", (FEDPROTO_LSH_THRESHOLDS,),
           arg=0),
    Mutant("fedproto-lsh-tree-charged-the-leaf-share", DPP, "DPPrototypes._release_lsh",
           "plan['candidates'] if private else math.inf", "plan['search'] if private else math.inf",
           (f"{CORET}::test_lsh_release_ledger_and_shape",)),
    Mutant("fedproto-lsh-step-counts-not-shared-by-steps", DPP, "DPPrototypes._release_lsh",
           "plan[x] / R if private else math.inf", "plan[x] if private else math.inf", (FEDPROTO_LSH_REFINE,)),
    Mutant("fedproto-lsh-laplace-step-sums-not-shared-by-steps", DPP, "DPPrototypes._release_lsh",
           "plan['sums'] / R if private and R > 0 else math.inf", "plan['sums'] if private and R > 0 else math.inf",
           (FEDPROTO_PAPER_LLOYD,)),
    Mutant("fedproto-lsh-leaf-sums-keep-the-whole-rho", DPP, "lsh_lloyd_split", "('coreset sums', 1.0 - w, 1)",
           "('coreset sums', 1.0, 1)", (FEDPROTO_LSH_REFINE,)),
    Mutant("fedproto-lsh-gaussian-budget-counts-the-counts-share", DPP, "DPPrototypes._lsh_gaussian_plan",
           "plan['search'] + plan['sums']", "plan['search'] + plan['sums'] + plan['counts']", (FEDPROTO_LSH_REFINE,)),
    Mutant("fedproto-lsh-steps-by-the-rule-not-replanned", DPP, "DPPrototypes._release_lsh",
           "e_leaf, d_leaf, d_sum, e_steps, sigma_leaf, sigma_steps = planned(R)", "pass",
           (f"{CORET}::test_lsh_default_refine_steps_follow_the_public_rule_within_budget",), nth=1),
    Mutant("fedproto-unknown-budget-stage-ignored", DPP, "DPPrototypes._validate",
           "set(self.split) - set(DEFAULT_SPLIT) - {'delta_candidates'}", "set()", (FEDPROTO_CONFIG_ERRORS,)),
    Mutant("fedproto-zero-delta-accepted", DPP, "DPPrototypes._validate",
           "math.isfinite(mech_eps) and float(self.delta) <= 0", "math.isfinite(mech_eps) and float(self.delta) < 0",
           (FEDPROTO_CONFIG_ERRORS,)),
    Mutant("fedproto-zero-share-checked-only-at-the-largest-k", DPP, "DPPrototypes._validate",
           "{int(self.k), 1} if self.cluster_size is not None else {int(self.k)}", "{int(self.k)}",
           (FEDPROTO_ZERO_SHARE,)),
    Mutant("fedproto-zero-share-of-the-size-stage-accepted", DPP, "DPPrototypes._stage_shares",
           "needs.append('size')", "pass", (FEDPROTO_ZERO_SHARE,)),
    Mutant("fedproto-zero-share-of-the-trial-choice-accepted", DPP, "DPPrototypes._stage_shares",
           "needs.append('choice')", "pass", (FEDPROTO_ZERO_SHARE,)),
    Mutant("fedproto-zero-share-of-the-support-accepted", DPP, "DPPrototypes._stage_shares",
           "needs.append('support')", "pass", (FEDPROTO_ZERO_SHARE,)),
    Mutant("fedproto-zero-shares-not-checked-before-the-release", DPP, "DPPrototypes._validate",
           "self._stage_shares(X.shape[1], k)", "None", (FEDPROTO_ZERO_SHARE,)),
    Mutant("fedproto-partition-shifted-grid-levels-undercounted", PMECH, "partition_plan",
           "depth + (n_grids - 1) * (depth + 1)", "depth + (n_grids - 1) * depth", (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-search-final-choice-not-budgeted", PMECH, "search_plan",
           "steps + (1 if final_choice else 0)", "steps", (FEDPROTO_RANDOM_CONFIGS,)),
    Mutant("fedproto-search-final-choice-the-whole-share", PMECH, "search_plan",
           "eps_step if final_choice else 0.0", "eps_search if final_choice else 0.0", (STAGE_ROWS,)),
    Mutant("fedproto-paper-support-always-monotone", PMECH, "recover_paper", "vmin == 0", "True",
           (f"{DPPT}::test_the_paper_recoverys_support_is_selected_at_the_sensitivity_of_one_coordinate",)),
    Mutant("fedproto-paper-sums-l2-sensitivity", PMECH, "recover_paper",
           "mech.laplace_mechanism(sel, s * bound, eps_sum, rng)", "math.sqrt(s) * bound", (STAGE_ROWS,), arg=1),
    Mutant("fedproto-paper-prototypes-not-clipped", PMECH, "recover_paper",
           "np.clip(noisy_sel / denom, vmin, vmax)", "noisy_sel / denom",
           (f"{DPPT}::test_dp_release_shapes_bounds_and_support",)),
    Mutant("fedproto-gaussian-sums-at-the-value-bound", DPP, "DPPrototypes._recover",
           "recover_gaussian(np.asarray((A @ Xs).todense()), denom, s, lam)", "bound",
           (f"{DPPT}::test_dp_gaussian_all_items_normalised_rows", FEDPROTO_SUMS_AUDIT), arg=3),
    Mutant("fedproto-gaussian-prototypes-not-clipped", PMECH, "recover_gaussian",
           "np.clip(noisy_sums / denom, vmin, vmax)", "noisy_sums / denom",
           (f"{DPPT}::test_dp_release_shapes_bounds_and_support",)),
    Mutant("fedproto-simulation-noise-in-production", PROTO, "FederatedRecommender.fit",
           "private and not self.simulation", "private and self.simulation",
           (f"{NOISE}::test_noise_seed_known_adversary_rebuilds_sizes_only_in_simulation",)),
    Mutant("fedproto-simulation-not-labelled", PROTO, "FederatedRecommender.fit",
           "self.ledger_.simulation = bool(private and self.simulation)", "self.ledger_.simulation = False",
           (f"{NOISE}::test_noise_protocol_run_draws_from_opendp_in_production",)),
    Mutant("fedproto-entity-rows-not-charged-to-the-run", PROTO, "FederatedRecommender._fit_prototypes",
           "self.ledger_.spend(**asdict(row))", "None", (FEDPROTO_OWN_DELTA,)),
    Mutant("fedproto-sizes-sent-without-weighting", PROTO, "FederatedRecommender._fit_prototypes",
           "self.server_weighting == 'counts'", "True", (f"{PROTOT}::test_two_rounds_message_log",), nth=1),
    Mutant("fedproto-run-delta-not-given-to-the-method", PROTO, "build_method",
           "params.update(epsilon=config.epsilon, delta=config.delta)", "params.update(epsilon=config.epsilon)",
           (FEDPROTO_OWN_DELTA,)),
    Mutant("fedproto-kmeans-labelled-private", PROTOS, "KMeansPrototypes.release",
           "ledger.spend('prototypes', 'k-means++ centroids (non-private)', math.inf)", "0.0",
           (FEDPROTO_NON_PRIVATE_INF,), arg=2),
    Mutant("fedproto-krandom-labelled-private", PROTOS, "KRandomPrototypes.release",
           "ledger.spend('prototypes', 'k random raw rows (non-private)', math.inf)", "0.0",
           (FEDPROTO_NON_PRIVATE_INF,), arg=2),
    # ridge solves that hold at λ = 0, and the method that cannot run without the ridge
    Mutant("ridge-dp-als-users-by-a-plain-inverse", "dpfed_core/federation/dp_als.py", "_user_factors",
           "ridge_inverse(V.T @ V + lam * np.eye(r))", "np.linalg.inv(V.T @ V + lam * np.eye(r))",
           ("tests/test_ridge.py::test_dp_als_site_users_without_ridge_are_their_minimum_norm_directions",)),
    Mutant("ridge-dp-als-item-solve-by-a-plain-solve", "dpfed_core/federation/dp_als.py", "_item_solve",
           "ridge_solve(G + ridge * np.eye(G.shape[-1]), B)", "np.linalg.solve(G + ridge * np.eye(G.shape[-1]), B)",
           ("tests/test_ridge.py::test_dp_als_in_its_non_private_limit_without_ridge_is_evaluated",)),
    Mutant("ridge-dp-als-observed-users-by-a-plain-solve", "dpfed_core/federation/dp_als.py", "_observed_statistics",
           "ridge_solve(A, np.asarray(x @ V)[:, :, None])", "np.linalg.solve(A, np.asarray(x @ V)[:, :, None])",
           (RIDGE_RUNS,)),
    Mutant("ridge-friedman-rows-by-a-plain-solve", "dpfed_core/methods/comparison/friedman.py", "ridge_rows",
           "ridge_solve(A[live], b[live][:, :, None])", "np.linalg.solve(A[live], b[live][:, :, None])",
           (RIDGE_RUNS,)),
    Mutant("ridge-singular-system-solved-as-zero", "dpfed_core/models/ridge.py", "ridge_solve",
           "np.linalg.pinv(A, hermitian=True) @ b", "np.zeros_like(b)", (RIDGE_SOLVE,)),
    Mutant("ridge-singular-inverse-as-zero", "dpfed_core/models/ridge.py", "ridge_inverse",
           "np.linalg.pinv(A, hermitian=True)", "np.zeros_like(A)", (RIDGE_SOLVE,)),
    Mutant("ridge-pals-check-lets-zero-through", "dpfed_core/methods/comparison/specs.py",
           "check_output_perturbation_ridge", "not lam > 0", "lam < 0", (RIDGE_REFUSED,)),
    Mutant("ridge-compared-method-not-checked", "dpfed_core/evaluation/service.py", "check_run",
           "[config, *compared.values()]", "[config]", (RIDGE_REFUSED, COMPARED_SETTINGS)),
    Mutant("check-run-compared-method-at-the-runs-settings", "dpfed_core/evaluation/service.py", "check_run",
           "compared_config(dataset, config, m)", "config.replace(method=m)",
           ("tests/test_budget_releases.py::test_a_compared_dp_method_needs_a_declared_federation_too",)),
    Mutant("ridge-method-check-skipped", "dpfed_core/evaluation/service.py", "_check_method",
           "spec.check is not None", "False", (RIDGE_REFUSED,)),
    Mutant("ridge-pals-estimator-fits-without-ridge", "dpfed_core/methods/comparison/friedman.py",
           "FriedmanMF._validate", "self.algorithm == 'pals' and not self.lam > 0", "False",
           ("tests/test_ridge.py::test_the_pals_estimator_itself_refuses_a_fit_without_ridge",)),
    Mutant("budgetread-zero-delta-error-names-another-method", DPP, "DPPrototypes._validate",
           "f'{self.name} needs δ > 0: the private partition keeps a cube created by one user with a small "
           "probability that is charged to δ; use e.g. δ = 1e-6 (or 1/(10·n))'",
           "'dp-prototypes needs δ > 0: the private partition keeps a cube created by one user with a small "
           "probability that is charged to δ; use e.g. δ = 1e-6 (or 1/(10·n))'",
           ("tests/test_dp_prototypes.py::test_a_zero_delta_is_refused_naming_the_method_given_and_the_delta_flag",)),
    Mutant("ridge-evaluation-ranks-nan-scores", "dpfed_core/evaluation/metrics.py", "evaluate",
           "not (np.isfinite(U_b).all() and np.isfinite(V_b).all())", "False",
           ("tests/test_metrics.py::test_a_model_with_non_finite_factors_is_refused_by_name_not_ranked",)),
    # what users read: the CLI, the dashboard and the report
    Mutant("userread-dp-comparison-of-a-non-private-run-at-infinite-epsilon", "dpfed_core/evaluation/defaults.py",
           "compared_config", "METHODS[method].uses_epsilon and not METHODS[base.method].uses_epsilon", "False",
           ("tests/test_cli.py::test_a_dp_method_compared_with_a_non_private_run_runs_and_is_charged_at_the_default_"
            "epsilon", "tests/test_app_pages.py::test_evaluate_runs_a_dp_comparison_of_a_non_private_run_at_the_"
            "default_epsilon")),
    Mutant("userread-comparison-computed-at-the-runs-epsilon", "dpfed_core/evaluation/service.py", "execute_run",
           "compared_config(dataset, config, m)", "config.replace(method=m)",
           ("tests/test_cli.py::test_a_dp_method_compared_with_a_non_private_run_runs_and_is_charged_at_the_default_"
            "epsilon",)),
    Mutant("userread-comparison-planned-at-the-runs-epsilon", "dpfed_core/evaluation/budget.py", "plan_run",
           "config if m == config.method else compared_config(dataset, config, m)", "config.replace(method=m)",
           ("tests/test_cli.py::test_a_dp_method_compared_with_a_non_private_run_runs_and_is_charged_at_the_default_"
            "epsilon",)),
    Mutant("userread-evaluate-page-comparison-at-the-runs-epsilon", EVAL_PAGE, "config_for",
           "compared_config(ds, cfg, method)", "cfg.replace(method=method)",
           ("tests/test_app_pages.py::test_evaluate_runs_a_dp_comparison_of_a_non_private_run_at_the_default_"
            "epsilon",)),
    Mutant("userread-wide-tables-item-column-read-as-the-item", "dpfed_core/data/long_table.py", "_build",
           "col in wide", "False",
           ("tests/test_cli.py::test_a_wide_tables_item_column_"
            "is_refused_as_the_item_or_the_value",)),
    Mutant("userread-wide-tables-item-column-read-as-the-value", "dpfed_core/data/long_table.py", "_build",
           "((item_col, 'item_col'), (value_col, 'value_col'))", "((item_col, 'item_col'),)",
           ("tests/test_cli.py::test_a_wide_tables_item_column_is_refused_as_the_item_or_the_value",)),
    Mutant("userread-wide-table-judged-on-the-read-columns-only", "dpfed_core/data/tables.py", "read_table",
           "df.attrs.update(file_columns=_header_names(_src(), sep, compression, _used(), skip))", "None",
           ("tests/test_cli.py::test_a_wide_tables_item_column_is_refused_as_the_item_or_the_value",)),
    Mutant("userread-data-page-wide-tables-column-as-the-value", "dpfed_core/data/upload.py", "mapping_problems",
           "wide and value in wide", "False",
           ("tests/test_dashboard_engine.py::test_mapping_problems_refuse_a_wide_tables_column_as_the_value",)),
    Mutant("userread-header-named-column-n-read-as-a-wide-table", "dpfed_core/data/upload.py", "wide_item_columns",
           "no_header or list(map(str, columns)) == headerless_names('', len(columns))", "no_header",
           ("tests/test_intake_rules.py::test_the_cli_reads_a_header_less_file_as_the_data_page_does_its_first_line_"
            "as_written",)),
    Mutant("userread-header-less-line-measured-against-the-hint-line", "dpfed_core/data/tables.py", "read_table",
           "'the first data line'", "'the first line'",
           ("tests/test_intake_rules.py::test_a_header_less_file_after_a_separator_hint_or_blank_lines_keeps_its_"
            "first_row",)),
    Mutant("userread-one-repeated-row-counted-as-rows", "dpfed_core/data/long_table.py", "_merge_duplicates",
           "_count(n_dup, 'repeated row')", "f'{n_dup} repeated rows'",
           ("tests/test_cli.py::test_a_repeated_row_is_one_sentence_naming_"
            "the_flag_and_the_control_for_every_value_kind",)),
    Mutant("userread-repeated-implicit-rows-said-to-add-up", "dpfed_core/data/long_table.py", "_merge_duplicates",
           "fixed == 'sum'", "fixed is not None",
           ("tests/test_cli.py::test_a_repeated_row_is_one_sentence_naming_"
            "the_flag_and_the_control_for_every_value_kind",)),
    Mutant("userread-dashboard-headline-ranking-metrics-at-ten", "dpfed_core/ui/tables.py", "headline_metrics",
           "n = int(top_n)", "n = 10",
           ("tests/test_app_pages.py::test_a_run_at_top_n_5_is_"
            "labelled_at_5_on_every_dashboard_table",)),
    Mutant("userread-stored-run-summary-ignores-its-top-n", "dpfed_core/ui/tables.py", "stored_run_summary",
           "config.get('top_n', 10)", "10",
           ("tests/test_app_pages.py::test_a_run_at_top_n_5_is_"
            "labelled_at_5_on_every_dashboard_table",)),
    Mutant("userread-dashboard-metric-columns-only-at-ten", "dpfed_core/ui/tables.py", "metric_columns",
           "ranked.get(b, f'{b}_at_10')", "f'{b}_at_10'",
           ("tests/test_app_pages.py::test_a_run_at_top_n_5_is_"
            "labelled_at_5_on_every_dashboard_table",)),
    Mutant("userread-dashboard-ranking-label-left-at-ten", "dpfed_core/evaluation/verdicts.py", "metric_at",
           "labels[f'{base}_at_10'].replace('@10', f'@{n}')", "labels[f'{base}_at_10']",
           ("tests/test_app_pages.py::test_a_run_at_top_n_5_is_"
            "labelled_at_5_on_every_dashboard_table",)),
    Mutant("userread-report-unresolved-tpr-printed-as-a-dash", "dpfed_core/reporting/report_sections.py", "_audit",
           "r['tpr_at_fpr'][f] if resolved(r['tpr_at_fpr'][f]) else 'n/r'", "r['tpr_at_fpr'][f]",
           ("tests/test_report.py::test_an_unresolvable_tpr_is_written_n_r_and_said_why_under_the_audit_table",)),
    Mutant("userread-report-unresolved-tpr-unexplained", "dpfed_core/reporting/report_sections.py", "_audit",
           "any(row[f'tpr{f}'] == 'n/r' for row in rows for f in fprs)", "False",
           ("tests/test_report.py::test_an_unresolvable_tpr_is_written_n_r_and_said_why_under_the_audit_table",)),
    Mutant("userread-top-n-bound-above-the-catalogue", "dpfed_core/cli/args.py", "run_config",
           "args.top_n > dataset.n_items", "args.top_n > max(MAX_K, dataset.n_items)",
           ("tests/test_cli.py::test_top_n_is_bounded_by_the_catalogue_as_its_help_says",)),
    Mutant("userread-recommend-top-n-past-the-catalogue", REC_PAGE, MODULE, "min(50, ds.n_items)", "50",
           ("tests/test_dashboard_pages.py::test_recommend_lists_at_most_the_catalogue_as_the_cli_top_n",)),
    # the empirical privacy audit: the ε lower bounds on hand-computed counts, releases of known leak
    Mutant("auditcost-cp-each-end-at-the-whole-miss-rate", BOUNDS, "clopper_pearson", "(1.0 - confidence) / 2.0",
           "1.0 - confidence", (f"{AUDT}::test_clopper_pearson_hand_checked",)),
    Mutant("auditcost-cp-lower-end-from-the-upper-tail", BOUNDS, "clopper_pearson",
           "stats.beta.ppf(a, np.maximum(x, 1e-300), n - x + 1)", "stats.beta.ppf(1 - a, np.maximum(x, 1e-300), n - x + 1)",
           (f"{AUDT}::test_clopper_pearson_hand_checked",)),
    Mutant("auditcost-fpr-bounded-on-the-in-runs", BOUNDS, "epsilon_bounds", "clopper_pearson(fp, n_out, confidence)",
           "clopper_pearson(fp, n_in, confidence)",
           ("tests/test_audit_statistics.py::test_each_rate_is_bounded_on_the_runs_of_its_own_class",)),
    Mutant("auditcost-tpr-bounded-on-the-out-runs", BOUNDS, "epsilon_bounds", "clopper_pearson(tp, n_in, confidence)",
           "clopper_pearson(tp, n_out, confidence)",
           ("tests/test_audit_statistics.py::test_each_rate_is_bounded_on_the_runs_of_its_own_class",)),
    Mutant("auditcost-tpr-form-without-delta", BOUNDS, "epsilon_bounds", "tpr_lo - delta", "tpr_lo",
           (f"{AUDT}::test_epsilon_bound_hand_checked",)),
    Mutant("auditcost-tpr-form-from-the-point-estimate", BOUNDS, "epsilon_bounds", "tpr_lo - delta",
           "tp / n_in - delta", (f"{AUDT}::test_epsilon_bound_hand_checked",)),
    Mutant("auditcost-fpr-from-the-point-estimate", BOUNDS, "epsilon_bounds", "np.log(fpr_hi)", "np.log(fp / n_out)",
           ("tests/test_audit_statistics.py::test_each_rate_is_bounded_on_the_runs_of_its_own_class",)),
    Mutant("auditcost-tnr-from-the-lower-fpr", BOUNDS, "epsilon_bounds", "1.0 - fpr_hi", "1.0 - fpr_lo",
           (f"{AUDT}::test_the_tnr_form_subtracts_delta_like_the_tpr_form",)),
    Mutant("auditcost-fnr-from-the-upper-tpr", BOUNDS, "epsilon_bounds", "1.0 - tpr_lo", "1.0 - tpr_hi",
           (f"{AUDT}::test_the_tnr_form_subtracts_delta_like_the_tpr_form",)),
    Mutant("auditcost-tpr-and-fpr-swapped", BOUNDS, "epsilon_bounds",
           "np.log(np.maximum(tpr_lo - delta, 0.0)) - np.log(fpr_hi)",
           "np.log(np.maximum(fpr_hi - delta, 0.0)) - np.log(tpr_lo)",
           ("tests/test_audit_statistics.py::test_each_rate_is_bounded_on_the_runs_of_its_own_class",)),
    Mutant("auditcost-ceiling-without-delta", BOUNDS, "max_certifiable_epsilon",
           "epsilon_bounds(n_per_class, 0, 0, n_per_class, delta, confidence)", "0.0",
           ("tests/test_audit_statistics.py::test_the_ceiling_subtracts_delta_at_the_confidence_it_is_given",), arg=4),
    Mutant("auditcost-ceiling-at-the-default-confidence", BOUNDS, "max_certifiable_epsilon",
           "epsilon_bounds(n_per_class, 0, 0, n_per_class, delta, confidence)", "0.95",
           ("tests/test_audit_statistics.py::test_the_ceiling_subtracts_delta_at_the_confidence_it_is_given",), arg=5),
    Mutant("auditcost-a-tied-score-said-out", BOUNDS, "_confusion_at", "np.searchsorted(si, thresholds, side='left')",
           "np.searchsorted(si, thresholds, side='right')",
           ("tests/test_audit_statistics.py::test_a_score_equal_to_the_threshold_is_a_test_saying_in",)),
    Mutant("auditcost-bound-certified-on-the-calibration-runs", BOUNDS, "empirical_epsilon",
           "_confusion_at(ev_out, ev_in, np.array([t]))", "_confusion_at(cal_out, cal_in, np.array([t]))",
           (f"{AUDT}::test_the_threshold_is_chosen_on_calibration_scores_even_when_evaluation_would_favour_another",)),
    Mutant("auditcost-negative-bound-reported", BOUNDS, "empirical_epsilon", "max(eps, 0.0)", "eps",
           (f"{AUDT}::test_epsilon_bound_hand_checked",)),
    Mutant("auditcost-tpr-at-one-false-positive-unresolved", BOUNDS, "tpr_at_fpr", "target * int(n_out) < 1",
           "target * int(n_out) <= 1", (f"{AUDT}::test_roc_auc_and_tpr_at_fpr",)),
    Mutant("auditcost-audit-without-the-claimed-delta", MEMB, "audit_target",
           "empirical_epsilon(*s_cal, s[0, half:], s[1, half:], delta_claim, confidence)", "0.0",
           ("tests/test_audit_statistics.py::test_a_release_that_shows_the_target_is_bounded_above_its_claim_at_the_"
            "ceiling_of_its_evaluation_runs",), arg=3),
    Mutant("auditcost-audit-certified-on-the-calibration-half", MEMB, "audit_target",
           "empirical_epsilon(*s_cal, s[0, half:], s[1, half:], delta_claim, confidence)",
           "empirical_epsilon(*s_cal, *s_cal, delta_claim, confidence)",
           ("tests/test_audit_statistics.py::test_a_release_that_shows_the_target_is_bounded_above_its_claim_at_the_"
            "ceiling_of_its_evaluation_runs",)),
    Mutant("auditcost-audit-ceiling-of-every-run", MEMB, "audit_target", "n_cert = runs - half", "n_cert = runs",
           (LR_CEILING,)),
    Mutant("auditcost-summable-ceiling-of-every-run", MEMB, "audit_summable_target",
           "(s[0], s[1], runs - half)", "(s[0], s[1], runs)", (LR_CEILING,)),
    Mutant("auditcost-summable-audit-watches-the-first-entity", MEMB, "audit_summable_target",
           "shares[position].values", "shares[0].values",
           ("tests/test_audit_statistics.py::test_a_summable_audit_of_a_later_entity_watches_that_entitys_share",)),
    Mutant("auditcost-summable-audit-rows-placed-first", MEMB, "audit_summable_target",
           "list(others[:position]) + [D] + list(others[position:])", "[D] + list(others)",
           ("tests/test_audit_statistics.py::test_a_summable_audit_of_a_later_entity_watches_that_entitys_share",)),
    Mutant("auditcost-audit-without-bonferroni", MEMB, "run_audit", "1.0 - (1.0 - confidence) / fam", "confidence",
           (AUDIT_FAMILIES,)),
    Mutant("auditcost-family-of-one-target", MEMB, "run_audit",
           "len(tgts) * (n_summable if is_summable(mname) else n_attacks)",
           "n_summable if is_summable(mname) else n_attacks", (AUDIT_FAMILIES,)),
    Mutant("auditcost-targets-among-every-entitys-ids", MEMB, "run_audit", "dataset.user_ids[sl]", "dataset.user_ids",
           ("tests/test_audit_statistics.py::test_a_named_user_of_a_later_entity_is_audited_with_that_users_row",)),
    Mutant("auditcost-violation-only-above-the-ceiling", MEMB, "verdict_for", "epsilon_lb > claimed",
           "epsilon_lb > max_certifiable",
           (f"{AUDT}::test_verdict_is_inconclusive_when_the_claim_exceeds_what_the_runs_can_certify",)),
    Mutant("auditcost-summary-ceiling-of-the-weakest-test", MEMB, "summarize",
           "max((r['max_certifiable_epsilon'] for r in rows))", "min((r['max_certifiable_epsilon'] for r in rows))",
           ("tests/test_audit_statistics.py::test_the_summary_states_the_ceiling_of_the_strongest_test_it_ran",)),
    Mutant("auditcost-power-check-at-the-real-noise", MEMB, "power_check", "float(method.epsilon) * factor",
           "float(method.epsilon)", (f"{AUDT}::test_summable_audit_has_power_when_the_noise_is_shrunk",)),
    Mutant("auditcost-neighbours-without-the-first-row", AUDIT_TARGETS, "neighbouring_pair",
           "keep[target.index] = False", "keep[0] = False", (f"{AUDT}::test_targets_and_neighbours",)),
    Mutant("auditcost-neighbours-in-and-out-swapped", AUDIT_TARGETS, "neighbouring_pair", "(X[keep], X)",
           "(X, X[keep])", (f"{AUDT}::test_targets_and_neighbours",)),
    # the time hints: what a run, a comparison or a sweep is predicted to take
    Mutant("auditcost-time-hint-sweep-at-one-epsilon", "dpfed_core/evaluation/cost.py", "sweep_configs",
           "sweep_jobs(config.method, epsilons, references)", "[config.epsilon]",
           ("tests/test_cost.py::test_sweep_runs_are_the_sweeps_points",), arg=1),
    Mutant("auditcost-time-hint-sweep-of-the-first-seed", "dpfed_core/evaluation/cost.py", "sweep_configs",
           "[config.replace(method=m, epsilon=e, seed=int(s)) for s in seeds for m, e in jobs "
           "if job_key(m, e, int(s), config.method) not in done]",
           "[config.replace(method=m, epsilon=e, seed=int(s)) for s in list(seeds)[:1] for m, e in jobs "
           "if job_key(m, e, int(s), config.method) not in done]",
           ("tests/test_cost.py::test_sweep_runs_are_the_sweeps_points",)),
    Mutant("auditcost-time-hint-of-the-last-run", "dpfed_core/evaluation/cost.py", "predict_runs",
           "sum((sum(p.values()) for p in each))", "sum(each[-1].values())",
           ("tests/test_cost.py::test_predictions_use_the_measurement_of_the_same_run_and_say_when_unmeasured",)),
    Mutant("auditcost-clock-total-of-the-first-run", "dpfed_core/evaluation/cost.py", "RunClock.total",
           "sum((sum(p.values()) for p in self.plan))", "sum(self.plan[0].values())",
           ("tests/test_cost.py::test_the_clock_names_the_stage_and_scales_the_time_left",)),
    Mutant("auditcost-time-hint-noise-per-entity-cost-once", "dpfed_core/evaluation/cost.py",
           "_with_production_noise", "b * float(shape['H'])", "b", (PRODUCTION_HINT,)),
    Mutant("auditcost-time-hint-measured-run-without-noise", "dpfed_core/evaluation/cost.py", "predict_run",
           "doc['model'].get(_key(c['method'], mode)) or {}", "{}", (PRODUCTION_HINT,)),
    Mutant("auditcost-time-hint-other-modes-cost-first", "dpfed_core/evaluation/cost.py", "_predict",
           "model.get(_key(method, mode)) or model.get(_key(method, 'zero' if mode == 'observed' else 'observed'))",
           "model.get(_key(method, 'zero' if mode == 'observed' else 'observed')) or model.get(_key(method, mode))",
           ("tests/test_cost_hints.py::test_each_mode_is_predicted_from_its_own_measurement_and_an_unmeasured_mode_"
            "from_the_other",)),
    Mutant("auditcost-time-hint-seconds-said-as-minutes", "dpfed_core/evaluation/cost.py", "format_seconds",
           "f'{s:.0f} s'", "f'{s:.0f} min'",
           ("tests/test_cost_hints.py::test_seconds_below_a_minute_are_said_in_seconds_and_longer_times_rounded_to_"
            "the_second",)),
    Mutant("auditcost-time-hint-seconds-truncated", "dpfed_core/evaluation/cost.py", "format_seconds",
           "int(round(s))", "int(s)",
           ("tests/test_cost_hints.py::test_seconds_below_a_minute_are_said_in_seconds_and_longer_times_rounded_to_"
            "the_second",)),
    Mutant("auditcost-clock-done-counts-the-current-run", "dpfed_core/evaluation/cost.py", "RunClock.predicted_done",
           "self.plan[:self.done_runs]", "self.plan[:self.done_runs + 1]",
           ("tests/test_cost.py::test_the_clock_names_the_stage_and_scales_the_time_left",)),
    Mutant("auditcost-deployment-hint-without-flowers-overhead", "dpfed_core/evaluation/cost.py",
           "deployment_estimate", "estimate_with_load(inproc + extra[0])", "estimate_with_load(inproc)",
           ("tests/test_cost_hints.py::test_a_deployments_stated_time_is_the_in_process_run_plus_flowers_overhead",)),
    Mutant("auditcost-time-hint-minute-said-as-sixty-seconds", "dpfed_core/evaluation/cost.py", "format_seconds",
           "round(s) < 60", "s < 60",
           ("tests/test_cost_hints.py::test_a_time_that_rounds_to_a_minute_is_said_in_minutes",)),
    Mutant("pageread-federate-k-not-passed", FED_PAGE, MODULE,
           "dict(k=int(st.session_state['fed_k']))", "base.k",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="k"),
    Mutant("pageread-federate-rank-not-passed", FED_PAGE, MODULE,
           "dict(rank=int(st.session_state['fed_rank']))", "base.rank",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="rank"),
    Mutant("pageread-federate-lam-not-passed", FED_PAGE, MODULE,
           "dict(lam=float(st.session_state['fed_lam']))", "base.lam",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="lam"),
    Mutant("pageread-federate-mode-not-passed", FED_PAGE, MODULE,
           "dict(mode=st.session_state['fed_mode'])", "base.mode",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="mode"),
    Mutant("pageread-federate-seed-not-passed", FED_PAGE, MODULE,
           "dict(seed=int(st.session_state['fed_seed']))", "base.seed",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="seed"),
    Mutant("pageread-federate-simulation-not-passed", FED_PAGE, MODULE,
           "dict(simulation=bool(st.session_state['fed_simulation']))", "base.simulation",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="simulation"),
    Mutant("pageread-federate-iterations-not-passed", FED_PAGE, MODULE,
           "dict(max_iter=max_iter)", "base.max_iter",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="max_iter"),
    Mutant("pageread-federate-test-fraction-not-passed", FED_PAGE, MODULE,
           "dict(test_fraction=test_fraction)", "base.test_fraction",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="test_fraction"),
    Mutant("pageread-federate-hidden-entries-not-passed", FED_PAGE, MODULE,
           "dict(n_hidden=n_hidden)", "base.n_hidden",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="n_hidden"),
    Mutant("pageread-federate-weighting-not-passed", FED_PAGE, MODULE,
           "dict(server_weighting=weighting if dash.has_server_weighting(method) else 'none')", "'none'",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="server_weighting"),
    Mutant("pageread-federate-delta-not-passed", FED_PAGE, MODULE,
           "dict(delta=delta if spec.uses_epsilon else base.delta)", "base.delta",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="delta"),
    Mutant("pageread-federate-typed-epsilon-not-passed", FED_PAGE, MODULE,
           "dict(epsilon=epsilon if spec.uses_epsilon else math.inf)", "base.epsilon",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",), arg="epsilon"),
    Mutant("pageread-federate-changed-parameter-dropped", FED_PAGE, MODULE,
           "proto_params[p.name] = v", "pass",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",)),
    Mutant("pageread-federate-typed-parameter-ignored", FED_PAGE, MODULE,
           "v = dash.parameter_value(p, text)", "v = p.default",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",)),
    Mutant("pageread-federate-budget-split-dropped", FED_PAGE, MODULE,
           "proto_params['split'] = split", "pass",
           ("tests/test_page_controls.py::test_every_federate_control_reaches_the_run",)),
    Mutant("pageread-federate-epsilon-metric-shows-the-request", FED_PAGE, MODULE,
           "dash.format_epsilon(_spent)", "dash.format_epsilon(_asked)",
           ("tests/test_page_controls.py::test_the_epsilon_shown_is_the_ledgers",)),
    Mutant("pageread-recommend-epsilon-shown-is-the-request", REC_PAGE, MODULE,
           "r['doc']['privacy']['epsilon']", "cfg.epsilon",
           ("tests/test_page_controls.py::test_the_epsilon_shown_is_the_ledgers",)),
    Mutant("pageread-loaded-delta-read-as-default", UI_DEFAULTS, "widget_state",
           "f'{float(cfg.delta):g}'", "'1e-06'",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-k-read-as-rank", UI_DEFAULTS, "widget_state",
           "int(cfg.k)", "int(cfg.rank)",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-simulation-dropped", UI_DEFAULTS, "widget_state",
           "bool(cfg.simulation)", "False",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-weighting-dropped", UI_DEFAULTS, "widget_state",
           "cfg.server_weighting", "'none'",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-mode-dropped", UI_DEFAULTS, "widget_state",
           "cfg.mode", "'zero'",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-test-fraction-rounded", UI_DEFAULTS, "widget_state",
           "float(cfg.test_fraction)", "round(cfg.test_fraction, 1)",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-epsilon-text-to-two-places", UI_DEFAULTS, "widget_state",
           "f'{eps:g}'", "f'{eps:.2f}'",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-range-lowest-refused", UI_DEFAULTS, "widget_state",
           "lo <= state[key] <= hi", "lo < state[key] <= hi",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-range-highest-refused", UI_DEFAULTS, "widget_state",
           "lo <= state[key] <= hi", "lo <= state[key] < hi",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-seed-range-of-32-bits", UI_DEFAULTS, MODULE,
           "('Seed (split and method)', 0, 2 ** 53 - 1)", "('Seed (split and method)', 0, 2 ** 31 - 1)",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-loaded-hidden-entries-range-of-100", UI_DEFAULTS, MODULE,
           "('Hidden entries per test user', 1, 1000)", "('Hidden entries per test user', 1, 100)",
           ("tests/test_page_controls.py::test_a_loaded_document_sets_every_control",)),
    Mutant("pageread-budget-zero-delta-refused", UI_INPUTS, "check_budget",
           "math.isnan(delta) or delta < 0", "math.isnan(delta) or delta <= 0",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-budget-delta-at-the-cap-accepted", UI_INPUTS, "check_budget",
           "delta >= MAX_DELTA and math.isfinite(eps)", "delta > MAX_DELTA and math.isfinite(eps)",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-budget-delta-cap-names-the-epsilon-box", UI_INPUTS, "check_budget",
           "ConfigError(f\"{delta_control}: δ = {delta:g} is refused: a chance of {delta:.0%} that the "
           "guarantee fails is no guarantee. Use δ well below 1/(number of users of an entity), e.g. 1e-6.\")",
           "ConfigError(f\"{eps_control}: δ = {delta:g} is refused: a chance of {delta:.0%} that the guarantee "
           "fails is no guarantee. Use δ well below 1/(number of users of an entity), e.g. 1e-6.\")",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-budget-gaussian-delta-names-the-epsilon-box", UI_INPUTS, "check_budget",
           "ConfigError(f'{delta_control}: {exc}.')", "ConfigError(f'{eps_control}: {exc}.')",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-budget-weak-epsilon-warned-at-100", UI_INPUTS, "check_budget",
           "math.isfinite(eps) and eps > 100", "math.isfinite(eps) and eps >= 100",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-budget-large-delta-unwarned", UI_INPUTS, "check_budget",
           "math.isfinite(eps) and delta > 1e-4", "math.isfinite(eps) and delta > 1e-3",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-seed-zero-refused", UI_INPUTS, "parse_seeds",
           "0 <= x <= MAX_SEED", "0 < x <= MAX_SEED",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-negative-seed-accepted", UI_INPUTS, "parse_seeds",
           "not 0 <= x <= MAX_SEED", "x > MAX_SEED",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-largest-k-refused", UI_INPUTS, "check_k_rank",
           "1 <= k <= MAX_K", "1 <= k < MAX_K",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-rank-of-every-item-refused", UI_INPUTS, "check_k_rank",
           "1 <= rank <= top", "1 <= rank < top",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-rank-not-bounded-by-the-items", UI_INPUTS, "check_k_rank",
           "min(MAX_RANK, int(ds.n_items))", "MAX_RANK",
           ("tests/test_page_controls.py::test_the_budget_boxes_take_their_range_and_name_their_box",)),
    Mutant("pageread-federate-run-rules-checked-after-run", FED_PAGE, MODULE,
           "check_run(ds, config)", "None",
           ("tests/test_page_controls.py::test_a_delta_the_method_refuses_is_named_before_run",)),
    Mutant("pageread-job-finished-entity-not-counted", UI_JOBS, "fraction_of",
           "1 if event.endswith('_done') else 0", "0",
           ("tests/test_page_controls.py::test_the_progress_bar_places_each_phase_and_waits_to_extrapolate",)),
    Mutant("pageread-job-phase-without-its-start", UI_JOBS, "fraction_of",
           "lo + (hi - lo) * min(1.0, step / float(info['total']))",
           "(hi - lo) * min(1.0, step / float(info['total']))",
           ("tests/test_page_controls.py::test_the_progress_bar_places_each_phase_and_waits_to_extrapolate",)),
    Mutant("pageread-job-fcf-rounds-fill-the-bar", UI_JOBS, "fraction_of",
           "0.9 * min(1.0, float(info.get('round', 0)) / float(info['total']))",
           "min(1.0, float(info.get('round', 0)) / float(info['total']))",
           ("tests/test_page_controls.py::test_the_progress_bar_places_each_phase_and_waits_to_extrapolate",)),
    Mutant("pageread-job-time-left-from-the-first-event", UI_JOBS, "Job.seconds_left", "self.fraction < 0.02",
           "self.fraction <= 0",
           ("tests/test_page_controls.py::test_the_progress_bar_places_each_phase_and_waits_to_extrapolate",)),
    # ---- the odometer: what is charged, to which account, against which cap, and what it states
    Mutant("account-release-landing-on-the-cap-refused", ODO, "BudgetOdometer._check",
           "after.epsilon > cap_e * (1 + CAP_REL_TOL)", "after.epsilon >= cap_e",
           (f"{ACCOUNT_T}::test_a_release_that_ends_exactly_on_the_cap_fits_in_the_dry_run_and_in_the_charge",)),
    Mutant("account-dry-run-says-a-release-landing-on-the-cap-does-not-fit", ODO, "BudgetOdometer._preview_account",
           "after_max <= cap_e * (1 + CAP_REL_TOL)", "after_max < cap_e",
           (f"{ACCOUNT_T}::test_a_release_that_ends_exactly_on_the_cap_fits_in_the_dry_run_and_in_the_charge",)),
    Mutant("account-cap-equal-to-the-spend-refused", ODO, "BudgetOdometer.set_cap",
           "b.spent_epsilon > epsilon * (1 + CAP_REL_TOL)", "b.spent_epsilon >= epsilon",
           (ACCOUNT_CAP_AT_SPEND,)),
    Mutant("account-cap-refusal-names-the-least-spent-entity", ODO, "BudgetOdometer.set_cap",
           "max(over, key=lambda b: b.spent_epsilon)", "min(over, key=lambda b: b.spent_epsilon)",
           (ACCOUNT_CAP_AT_SPEND,)),
    Mutant("account-cap-removed-without-confirmation", ODO, "BudgetOdometer.set_cap",
           "epsilon > old_e * (1 + CAP_REL_TOL)", "math.isfinite(epsilon) and epsilon > old_e * (1 + CAP_REL_TOL)",
           (ACCOUNT_CAP_REMOVED,)),
    Mutant("account-raise-refusal-names-the-epsilon-flag", ODO, "BudgetOdometer.set_cap",
           "'confirm_raise'", "'epsilon'", (ACCOUNT_CAP_REMOVED,)),
    Mutant("account-cap-removal-logged-as-not-raised", ODO, "BudgetOdometer.set_cap",
           "int(raised)", "int(raised and math.isfinite(epsilon))", (ACCOUNT_CAP_REMOVED,)),
    Mutant("account-non-private-refusal-names-the-cap-control", ODO, "BudgetOdometer._check",
           "'allow_non_private'", "'cap'", (ACCOUNT_NON_PRIVATE,)),
    Mutant("account-non-private-audit-escapes-the-cap", ODO, "BudgetOdometer._check",
           "[p for p in plans if p.non_private]", "[p for p in plans if p.non_private and p.kind != 'audit']",
           (ACCOUNT_NON_PRIVATE,)),
    Mutant("account-non-private-refused-without-a-cap", ODO, "BudgetOdometer.reserve",
           "math.isfinite(o_e)", "o_e is not None", (ACCOUNT_NON_PRIVATE,)),
    Mutant("account-allowed-non-private-release-leaves-no-charge", ODO, "BudgetOdometer.reserve",
           "not p.simulation", "not p.simulation and not p.non_private", nth=2, tests=(ACCOUNT_NON_PRIVATE,)),
    Mutant("account-charge-stores-delta-as-epsilon", ODO, "BudgetOdometer.reserve",
           "{e: (c[0], c[1], p.rho, p.gaussian) for e, c in p.charges.items()}",
           "{e: (c[1], c[0], p.rho, p.gaussian) for e, c in p.charges.items()}", (ACCOUNT_EPS_DELTA,)),
    Mutant("account-cap-check-reads-delta-as-epsilon", ODO, "BudgetOdometer._plan_entries",
           "ReleaseCharge(eps, dlt, rho, bool(gauss), batch_id if p.batch else None)",
           "ReleaseCharge(dlt, eps, rho, bool(gauss), batch_id if p.batch else None)", (ACCOUNT_EPS_DELTA,)),
    Mutant("account-balance-states-delta-as-spent-epsilon", ODO, "BudgetOdometer._balance",
           "EntityBalance(e, c.epsilon)", "c.basic_delta", arg=1, tests=(ACCOUNT_EPS_DELTA,)),
    Mutant("account-rating-level-dp-charged-as-user-level", "dpfed_core/privacy/model.py", "PrivacyModel.user_level",
           "self is PrivacyModel.FEDERATED_USER_DP",
           "self in (PrivacyModel.FEDERATED_USER_DP, PrivacyModel.CENTRAL_RATING_DP)", (ACCOUNT_CENTRAL,)),
    Mutant("account-rating-level-dp-takes-no-epsilon", "dpfed_core/privacy/model.py", "PrivacyModel.uses_budget",
           "(PrivacyModel.FEDERATED_USER_DP, PrivacyModel.CENTRAL_RATING_DP)", "(PrivacyModel.FEDERATED_USER_DP,)",
           (ACCOUNT_CENTRAL,)),
    Mutant("account-withdrawn-release-still-spends", ODO, "BudgetOdometer._entries",
           ACCOUNT_ENTRIES_SQL, ACCOUNT_ENTRIES_SQL.replace(" AND r.status != 'withdrawn'", ""),
           (ACCOUNT_WITHDRAWN,)),
    Mutant("account-withdrawn-release-listed-as-charged", ODO, "BudgetOdometer.releases",
           "not d['simulation'] and d['n_entities_charged'] > 0 and d['status'] != 'withdrawn'",
           "not d['simulation'] and d['n_entities_charged'] > 0", (ACCOUNT_WITHDRAWN,)),
    Mutant("account-successful-run-left-reserved", ODO, "BudgetOdometer.charge", "res.close()", "None", nth=0,
           tests=(ACCOUNT_CHARGE_ONCE,)),
    Mutant("account-runner-drawn-rows-overridden-by-local-count", ODO, "BudgetOdometer.charge",
           "rows is None and drawn is not None", "drawn is not None", (ACCOUNT_CHARGE_ONCE,)),
    Mutant("account-check-composes-at-the-reference-delta", ODO, "BudgetOdometer._check",
           "cap_d if cap_d > 0 else REFERENCE_DELTA", "REFERENCE_DELTA", (ACCOUNT_CAP_DELTA,)),
    Mutant("account-balance-composed-at-the-reference-delta", ODO, "BudgetOdometer._balance",
           "cap_d if math.isfinite(cap_e) and cap_d > 0 else REFERENCE_DELTA", "REFERENCE_DELTA",
           (ACCOUNT_CAP_DELTA,)),
    Mutant("account-dry-run-spend-is-the-total-not-the-increase", ODO, "BudgetOdometer._preview_account",
           "spend, acct = (after.epsilon - before.epsilon, after.accountant)",
           "spend, acct = (after.epsilon, after.accountant)", (ACCOUNT_DRY_RUN,)),
    Mutant("account-dry-run-left-ignores-earlier-releases", ODO, "BudgetOdometer._preview_account",
           "min(left_min, max(cap_e - before.epsilon, 0.0))", "min(left_min, cap_e)", (ACCOUNT_DRY_RUN,)),
    Mutant("account-dry-run-binding-left-ignores-earlier-releases", ODO, "BudgetOdometer._preview_account",
           "max(cap_e - before.epsilon, 0.0) if math.isfinite(cap_e) else math.inf",
           "cap_e if math.isfinite(cap_e) else math.inf", (ACCOUNT_DRY_RUN,)),
    Mutant("account-refusal-swaps-the-spend-before-and-after", ODO, "_over_lines",
           "f'{who}: spent ε = {_spent(b)}, this would bring it to ε = {_spent(a)}'",
           "f'{who}: spent ε = {_spent(a)}, this would bring it to ε = {_spent(b)}'",
           (f"{ACCOUNT_T}::test_a_refusal_states_the_spend_before_and_after_the_release",)),
    Mutant("account-runs-left-one-too-many", ODO, "BudgetOdometer.runs_left",
           "min(lo, limit)", "min(lo + 1, limit)",
           (f"{ACCOUNT_T}::test_runs_left_counts_the_releases_that_still_fit",)),
    Mutant("account-cap-set-through-a-reexport-lands-on-the-reexport", ODO, "BudgetOdometer.set_cap",
           "(account, epsilon, delta, now_iso())", "(key, epsilon, delta, now_iso())", (ACCOUNT_REEXPORT,)),
    Mutant("account-cap-of-a-reexport-read-as-none", ODO, "BudgetOdometer.cap",
           "self._identity(con, key).account", "key", (ACCOUNT_REEXPORT,)),
    Mutant("account-balance-of-a-reexport-shows-its-own-spend", ODO, "BudgetOdometer.balance",
           "self._identity(con, key).account", "key", (ACCOUNT_REEXPORT,)),
    Mutant("account-reexport-checked-against-its-own-spend", ODO, "BudgetOdometer._check",
           "self._entries(con, ident.account)", "self._entries(con, ident.key)", (ACCOUNT_REEXPORT,)),
    Mutant("account-reexport-checked-under-its-own-entity-names", ODO, "BudgetOdometer._check",
           "self._plan_entries(plans, operation, ident.entity_map)", "self._plan_entries(plans, operation)",
           (ACCOUNT_REEXPORT,)),
    Mutant("account-reexport-charged-under-its-own-entity-names", ODO, "BudgetOdometer.reserve",
           "mapped_charge_rows(rid)", "None", arg=2, tests=(ACCOUNT_REEXPORT,)),
    Mutant("account-other-account-checked-against-this-accounts-cap", ODO, "BudgetOdometer.reserve",
           "(cap_e, cap_d) if who_is is ident else self._cap(con, who_is.account)", "(cap_e, cap_d)",
           (f"{FPT}::test_people_padded_with_others_are_checked_against_their_own_cap_and_charged_to_it",)),
    Mutant("account-sweep-points-checked-one-by-one-not-as-a-batch", ODO, "BudgetOdometer._plan_entries",
           "batch_id if p.batch else None", "None",
           (f"{ODOT}::test_a_run_and_its_comparison_are_checked_as_they_will_be_charged_not_as_a_batch",)),
    Mutant("account-delta-refusal-names-epsilon", ODO, "BudgetOdometer._check", "'delta'", "'epsilon'",
           ("tests/test_budget_delta_refusal.py::test_refusal_for_delta_names_delta_not_a_finite_basic_epsilon",)),
    Mutant("account-runs-left-counts-the-other-accounts-charges", ODO, "BudgetOdometer.runs_left", ACCOUNT_OP_ROWS,
           "con.execute(\"" + ACCOUNT_OP_ROWS_SQL + "\", (last['operation'],))",
           (f"{FPT}::test_runs_left_of_an_account_counts_its_own_charges_of_a_padded_tables_run_not_the_other_"
            "accounts",)),
    Mutant("account-refused-audit-registers-its-data", "dpfed_core/cli/budget_cmd.py", "open_store",
           "odometer.account_key(dataset)", "odometer.register(dataset)",
           (f"{ODOT}::test_a_refused_audit_of_a_view_the_store_does_not_know_leaves_no_row",)),
    Mutant("tradeoff-page-sweep-rules-checked-after-run", TRADE_PAGE, MODULE,
           "check_run(ds, config, [r for r in refs if r != method], 'references')", "None",
           (TRADE_REFUSED,)),
    Mutant("tradeoff-page-references-left-out-of-the-check", TRADE_PAGE, MODULE,
           "[r for r in refs if r != method]", "[]", (TRADE_REFUSED,)),
    Mutant("audit-power-factor-unchecked", MEMB, "run_audit",
           "power_factor is not None and (not (math.isfinite(float(power_factor)) and float(power_factor) > 1))",
           "False", (AUDIT_POWER_REFUSED,)),
    Mutant("audit-power-factor-of-one-accepted", MEMB, "run_audit", "float(power_factor) > 1",
           "float(power_factor) >= 1", (AUDIT_POWER_REFUSED,)),
    Mutant("planner-one-seed-accepted", PLANNER, "users_needed", "len(set(seeds)) < 2", "False",
           (PLANNER_SEEDS,)),
    Mutant("planner-repeated-seed-counted-twice", PLANNER, "users_needed", "len(set(seeds)) < 2",
           "len(seeds) < 2", (PLANNER_SEEDS,)),
    # reading and loading an uploaded table: rows kept, merged, counted and numbered as the file has them
    Mutant("upload-semicolon-separator-not-sniffed", TABLES, "_sniff_sep",
           "(',', '\\t', ';', '|')",
           "(',', '\\t', '|')",
           ("tests/test_long_table_rows.py::"
            "test_the_same_table_is_the_same_dataset_whatever_its_separator_line_ends_mark_or_column_order",)),
    Mutant("upload-chunk-codes-restart-at-zero", TABLES, "_CodeBook.add",
           'len(self.index) + np.arange(int(new.sum()))',
           'np.arange(int(new.sum()))',
           ("tests/test_long_table_rows.py::"
            "test_a_table_read_in_chunks_is_the_table_read_whole",)),
    Mutant("upload-chunk-rows-not-added-up", TABLES, "read_table",
           'n += len(chunk)',
           'n = len(chunk)',
           ("tests/test_long_table_rows.py::"
            "test_a_table_read_in_chunks_is_the_table_read_whole",)),
    Mutant("upload-line-of-a-row-one-early", TABLES, "_row_ref",
           '2 if from_text is True else int(from_text)',
           '1 if from_text is True else int(from_text)',
           ("tests/test_long_table_rows.py::"
            "test_an_error_names_the_files_own_line_with_a_header_without_one_and_after_blank_lines",)),
    Mutant("upload-data-row-counted-from-zero", TABLES, "_row_ref",
           'int(index_value) + 1',
           'int(index_value)',
           ("tests/test_long_table_rows.py::"
            "test_an_error_names_the_files_own_line_with_a_header_without_one_and_after_blank_lines",)),
    Mutant("upload-blank-lines-before-the-header-not-counted", TABLES, "read_table",
           '(2 if header else 1) + skip',
           '2 if header else 1',
           ("tests/test_long_table_rows.py::"
            "test_an_error_names_the_files_own_line_with_a_header_without_one_and_after_blank_lines",)),
    Mutant("upload-row-with-one-empty-field-dropped-as-blank", TABLES, "read_table",
           'df.isna().all(axis=1)',
           'df.isna().any(axis=1)',
           ("tests/test_long_table_rows.py::"
            "test_a_row_with_one_empty_field_is_refused_not_dropped_and_drop_missing_counts_rows_not_cells",)),
    Mutant("upload-repeats-counted-with-their-first-row", LT, "_merge_duplicates",
           "int(t.duplicated(['u', 'i']).sum())",
           'int(dup.sum())',
           ("tests/test_long_table_rows.py::"
            "test_repeated_ratings_keep_the_last_in_file_order_and_the_note_counts_the_repeats",)),
    Mutant("upload-repeated-ratings-keep-the-first", LT, "_merge_duplicates",
           "how if how != 'last' else 'last'",
           "how if how != 'last' else 'first'",
           ("tests/test_long_table_rows.py::"
            "test_repeated_ratings_keep_the_last_in_file_order_and_the_note_counts_the_repeats",)),
    Mutant("upload-summed-count-at-the-bound-said-above-it", LT, "_summed_counts_over_bound",
           'v > value_max',
           'v >= value_max',
           ("tests/test_long_table_rows.py::"
            "test_an_event_log_without_a_value_column_adds_its_events_up_and_checks_the_sums_against_the_bound",)),
    Mutant("upload-dropped-rows-counted-by-empty-cells", LT, "_reject_or_drop_missing",
           'int(any_miss.sum())',
           'int(miss.to_numpy().sum())',
           ("tests/test_long_table_rows.py::"
            "test_a_row_with_one_empty_field_is_refused_not_dropped_and_drop_missing_counts_rows_not_cells",)),
    Mutant("upload-more-empty-rows-counted-with-the-first", LT, "_reject_or_drop_missing",
           'n_bad - 1',
           'n_bad',
           ("tests/test_long_table_rows.py::"
            "test_a_row_with_one_empty_field_is_refused_not_dropped_and_drop_missing_counts_rows_not_cells",)),
    Mutant("upload-nan-rating-not-a-missing-number", LT, "_build",
           '_reject_or_drop_missing(df, label, from_text, needed, drop_missing, notes)',
           '()',
           ("tests/test_long_table_rows.py::"
            "test_a_row_with_one_empty_field_is_refused_not_dropped_and_drop_missing_counts_rows_not_cells",), arg='numeric'),
    Mutant("upload-list-missing-most-of-the-table-not-said", LT, "_apply_entities",
           '2 * n_rows > len(t)',
           'n_rows > len(t)',
           ("tests/test_long_table_rows.py::"
            "test_a_table_of_one_entity_is_refused_and_a_declared_list_missing_most_of_the_table_says_so",)),
    Mutant("upload-one-entity-federation-accepted", LT, "_apply_entities",
           'len(ents) < 2',
           'len(ents) < 1',
           ("tests/test_long_table_rows.py::"
            "test_a_table_of_one_entity_is_refused_and_a_declared_list_missing_most_of_the_table_says_so",)),
    Mutant("upload-catalogue-counts-undeclared-items-as-used", LT, "_apply_catalogue",
           "t.loc[known, 'i'].nunique()",
           "t['i'].nunique()",
           ("tests/test_long_table_rows.py::"
            "test_the_catalogue_note_counts_the_declared_items_without_a_row",)),
    Mutant("upload-fully-used-catalogue-said-to-miss-items", LT, "_apply_catalogue",
           'n_used < len(ids)',
           'n_used <= len(ids)',
           ("tests/test_long_table_rows.py::"
            "test_the_catalogue_note_counts_the_declared_items_without_a_row",)),
    Mutant("upload-mixed-ids-in-numeric-order", LT, "_natural_order",
           'num.notna().all()',
           'num.notna().any()',
           ("tests/test_long_table_rows.py::"
            "test_ids_are_in_numeric_order_only_when_every_one_is_a_number",)),
    Mutant("upload-first-item-past-the-catalogue-keeps-its-id-as-name", LT, "_assemble",
           'got.index.to_numpy() >= named',
           'got.index.to_numpy() > named',
           ("tests/test_long_table_rows.py::"
            "test_an_item_outside_a_titled_catalogue_takes_the_datas_name",)),
    Mutant("upload-users-unordered-within-their-entity", LT, "_assemble",
           "np.argsort(ent_of_user, kind='stable')",
           'np.argsort(ent_of_user)',
           ("tests/test_long_table_rows.py::"
            "test_users_are_in_natural_order_within_their_entity_whatever_the_rows_order",)),
    Mutant("upload-one-negative-value-among-positive-ones-accepted", LT, "_values",
           '(v < 0).any()',
           '(v < 0).all()',
           ("tests/test_long_table_rows.py::"
            "test_one_negative_value_among_positive_ones_is_refused",)),
    Mutant("upload-summed-ratings-accepted", LT, "_check_options",
           "duplicates == 'sum' and value_kind == 'ratings'",
           'False',
           ("tests/test_long_table_rows.py::"
            "test_repeated_ratings_keep_the_last_in_file_order_and_the_note_counts_the_repeats",)),
    Mutant("upload-event-log-read-as-implicit", LT, "infer_value_kind",
           "('counts', 'no value column: each row is one event')",
           "('implicit', 'no value column: each row is one event')",
           ("tests/test_long_table_rows.py::"
            "test_an_event_log_without_a_value_column_adds_its_events_up_and_checks_the_sums_against_the_bound",)),
    Mutant("upload-word-header-refused-on-any-lone-id", LT, "_refuse_header_read_as_data",
           'all((_rows_of_first(df[c]) == 1 for c in dict.fromkeys(columns)))',
           'any((_rows_of_first(df[c]) == 1 for c in dict.fromkeys(columns)))',
           ("tests/test_intake_rules.py::"
            "test_a_header_of_words_read_without_one_is_refused_where_ids_are_words_too",)),
    Mutant("upload-word-header-read-as-data", LT, "_refuse_header_read_as_data",
           '_numeric(pd.Series(first)).notna().any() or any((pd.isna(df[c].iloc[0]) for c in columns))',
           'True',
           ("tests/test_intake_rules.py::"
            "test_a_header_of_words_read_without_one_is_refused_where_ids_are_words_too",)),
    Mutant("upload-one-name-among-its-values-read-as-data", TABLES, "header_is_data",
           'len(found if found is not None else names_as_values(df)) >= 2',
           'len(found if found is not None else names_as_values(df)) >= 1',
           ("tests/test_long_table_rows.py::"
            "test_a_header_naming_one_of_its_own_values_is_still_a_header",)),
    Mutant("upload-repeated-header-line-read-as-data", TABLES, "names_as_values",
           'cells[c][~again]',
           'cells[c]',
           ("tests/test_upload.py::"
            "test_a_first_line_of_words_that_are_values_below_is_data_on_both_front_ends",)),
    Mutant("upload-data-read-as-header-kept", LT, "_build",
           '_refuse_data_read_as_header(df, label, from_text, list(needed))',
           'None',
           ("tests/test_upload.py::"
            "test_a_first_line_of_words_that_are_values_below_is_data_on_both_front_ends",)),
    Mutant("upload-missing-column-error-without-the-no-header-hint", TABLES, "_check_columns",
           'header_is_data(df)',
           'headerless(cols)',
           ("tests/test_upload.py::"
            "test_a_first_line_of_words_that_are_values_below_is_data_on_both_front_ends",)),
    Mutant("upload-upload-of-word-data-read-with-a-header", UPLOAD, "read_upload",
           'header_is_data(df)',
           'headerless([str(c) for c in df.columns])',
           ("tests/test_upload.py::"
            "test_a_first_line_of_words_that_are_values_below_is_data_on_both_front_ends",)),
    Mutant("upload-repeated-name-columns-counted-from-zero", "dpfed_core/ui/upload.py", "repeated_names_text",
           '[i + 1 for i, n in enumerate(header) if n == name]',
           '[i for i, n in enumerate(header) if n == name]',
           ("tests/test_long_table_rows.py::"
            "test_a_header_naming_a_column_twice_gives_its_places_counted_from_one",)),
    Mutant("upload-output-never-renamed-into-place", ATOMIC, "atomic_write",
           'os.replace(tmp_name, p)',
           'None',
           ("tests/test_long_table_rows.py::"
            "test_an_output_is_written_whole_by_a_rename_and_a_failed_write_leaves_no_part_file",)),
    Mutant("upload-part-file-left-after-a-failed-write", ATOMIC, "atomic_write",
           'os.unlink(tmp_name)',
           'None',
           ("tests/test_long_table_rows.py::"
            "test_an_output_is_written_whole_by_a_rename_and_a_failed_write_leaves_no_part_file",)),
    Mutant("upload-upload-rows-counted-with-the-header", TABLES, "check_upload_size",
           'lines > max_rows + header',
           'lines > max_rows',
           ("tests/test_long_table_rows.py::"
            "test_an_upload_of_as_many_rows_as_the_limit_is_read_and_one_more_is_refused",), nth=0),
    Mutant("upload-first-character-key-takes-two", LT, "derive_entity",
           's.str[:1]',
           's.str[:2]',
           ("tests/test_long_table_rows.py::"
            "test_entity_keys_take_the_first_character_or_the_declared_prefix",), nth=1),
    Mutant("upload-prefix-key-one-character-short", LT, "derive_entity",
           's.str[:int(m.group(1))]',
           's.str[:int(m.group(1)) - 1]',
           ("tests/test_long_table_rows.py::"
            "test_entity_keys_take_the_first_character_or_the_declared_prefix",)),
    Mutant("upload-attributes-joined-by-position", UPLOAD, "join_user_attributes",
           'joined.index = interactions.index',
           'pass',
           ("tests/test_upload.py::"
            "test_a_header_repeated_inside_a_table_joined_to_user_attributes_is_skipped_as_without_them",)),
    Mutant("upload-catalogue-numbers-written-apart-not-said-in-the-note", LT, "_apply_catalogue",
           "_written_apart(ids, bad.unique(), set(t.loc[known, 'i'].astype(str)))", "''",
           ("tests/test_long_table_rows.py::"
            "test_catalogue_ids_that_write_the_datas_numbers_another_way_are_named_with_both_spellings",)),
    Mutant("upload-catalogue-numbers-written-apart-not-said-in-the-error", LT, "_apply_catalogue",
           "_written_apart(ids, bad.unique())", "''",
           ("tests/test_long_table_rows.py::"
            "test_catalogue_ids_that_write_the_datas_numbers_another_way_are_named_with_both_spellings",), nth=0),
    Mutant("upload-missing-column-named-without-its-flag", TABLES, "_check_columns",
           "param = (params or {}).get(c)", "param = None",
           ("tests/test_long_table_rows.py::"
            "test_a_column_missing_by_its_case_is_named_with_its_flag_and_the_files_spelling",)),
    Mutant("upload-three-column-long-table-refused", UPLOAD, "upload_columns",
           "df.shape[1] < min_columns", "df.shape[1] <= min_columns",
           ("tests/test_long_table_rows.py::"
            "test_a_long_table_of_three_columns_is_offered_for_mapping_and_two_are_refused",)),
    Mutant("upload-users-without-attributes-counted-by-rows", UPLOAD, "join_user_attributes",
           "users[missing].unique()", "users[missing]",
           ("tests/test_long_table_rows.py::"
            "test_users_without_an_attribute_row_are_counted_once_whatever_their_rows",)),
    Mutant("upload-header-less-upload-reread-with-its-header", UPLOAD, "read_upload",
           "read_table(bytes(data), filename=filename, what=what, encoding=encoding, header=False)", "True",
           ("tests/test_upload.py::"
            "test_headerless_tab_separated_udata_is_guessed_user_item_rating_timestamp",), arg="header"),
    # ---- a deployed site is its own law: its policy, its budget, its shares, its shard, its TLS
    Mutant("node-site-delta-above-max-delta-accepted", SITE, "check",
           "req.delta > policy.max_delta * (1 + 1e-12)", "False", (NODE_SITE_RULES,)),
    Mutant("node-site-one-dropout-more-than-the-policy-accepted", SITE, "check",
           "req.max_dropouts > policy.max_dropouts", "req.max_dropouts > policy.max_dropouts + 1", (NODE_SITE_RULES,)),
    Mutant("node-site-method-the-policy-does-not-list-accepted", SITE, "check",
           "req.method not in policy.methods", "False", (NODE_SITE_RULES,)),
    Mutant("node-site-non-private-run-accepted-by-default", SITE, "check",
           "not policy.allow_non_private", "False", (NODE_SITE_RULES,)),
    Mutant("node-site-value-bounds-upper-end-unchecked", SITE, "check", "not lo <= v <= hi", "not lo <= v",
           (SITE_BOUNDS,)),
    Mutant("node-site-value-bounds-skip-the-methods-defaults", SITE, "check",
           "{k: v for k, v in req.bounds.items() if not lo <= v <= hi}",
           "{k: v for k, v in req.bounds.items() if not lo <= v <= hi and k not in req.derived}", (SITE_DERIVED,)),
    Mutant("node-site-site-budget-capped-at-one-runs-max", SITE, "accept",
           "odo.set_cap(key, policy.budget_epsilon, policy.budget_delta)", "policy.max_epsilon",
           (NODE_SITE_BUDGET,), arg=1),
    Mutant("node-site-simulation-charged-at-the-coordinators-epsilon", SITE, "accept", "PlannedRelease(kind='run')",
           "{shard.entity: (req.epsilon, dlt)}", (NODE_SITE_SIM_CHARGE,), arg="charges"),
    Mutant("node-site-secure-catalogue-over-declared-items-accepted", SITE, "accept",
           "req.item_catalogue != 'declared' and declared is not None and declared < shard.train.shape[1]", "False",
           (NODE_SITE_CATALOGUE,)),
    Mutant("node-site-own-items-called-a-declared-catalogue", SITE, "accept",
           "req.item_catalogue == 'declared' and (not req.non_private) and (getattr(shard, 'item_source', None) "
           "not in (None, 'declared'))", "False", (NODE_SITE_OWN_ITEMS,)),
    Mutant("node-site-refusal-left-out-of-the-sites-log", SITE, "accept",
           "log.add(**base, decision='refused', rule=exc.rule, note=exc.for_site())", "None", (NODE_SITE_BUDGET,)),
    Mutant("node-site-secagg-threshold-one-dropout-too-lenient", SITE, "check_secagg",
           "share_num - threshold > allowed", "share_num - threshold > allowed + 1", (NODE_SITE_SECAGG_RUN,)),
    Mutant("node-site-secagg-one-key-share-below-the-rule", SITE, "check_secagg", "share_num < rule",
           "share_num < rule - 1", (NODE_SITE_SECAGG_RULE,)),
    Mutant("node-site-secagg-sum-one-site-short", SITE, "check_secagg",
           "not n_accepted - allowed <= sample_num <= n_accepted",
           "not n_accepted - allowed - 1 <= sample_num <= n_accepted", (NODE_SITE_SECAGG_SITES,)),
    Mutant("node-site-unmask-this-node-named-dropped", SITE, "check_unmask", "int(own) in gone", "False",
           (NODE_SITE_UNMASK,), nth=0),
    Mutant("node-site-unmask-a-live-node-named-twice", SITE, "check_unmask", "len(set(live)) != len(live)", "False",
           (NODE_SITE_UNMASK,)),
    Mutant("node-site-unmask-one-dropped-neighbour-too-many", SITE, "check_unmask", "len(gone) > allowed",
           "len(gone) > allowed + 1", (NODE_SITE_UNMASK,)),
    Mutant("node-site-infinite-site-budget-accepted", SITE, "_checked_policy", "math.isinf(num['budget_epsilon'])",
           "False", (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-budget-delta-room-for-half-a-run", SITE, "_checked_policy", "budget_delta < 2 * max_delta",
           "budget_delta < max_delta", (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-empty-method-list-accepted", SITE, "_checked_policy", "not raw['methods']", "False",
           (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-misspelt-policy-key-ignored", SITE, "_checked_policy", "sorted(set(raw) - set(_KEYS))", "[]",
           (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-negative-epsilon-in-a-policy-accepted", SITE, "_checked_policy", "v < 0", "False",
           (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-empty-store-key-accepted", SITE, "_checked_policy", "not str(raw['store']).strip()", "False",
           (NODE_SITE_BAD_POLICY,)),
    Mutant("node-site-relative-store-read-from-the-working-folder", SITE, "_checked_policy",
           "(p.parent / store).resolve()", "store.resolve()", (STRICT_DEFAULTS,)),
    Mutant("node-site-shard-numbered-by-export-order", SHARDS, "write_shards",
           "h if declared is None else declared.index(str(name))", "h", (NODE_SITE_SHARDS,)),
    Mutant("node-site-shards-of-other-sites-written", SHARDS, "write_shards",
           "only is not None and str(name) not in only", "False", (NODE_SITE_SHARD_ONLY,)),
    Mutant("node-site-shard-of-another-format-read", SHARDS, "load_shard", "int(z['version']) != SHARD_VERSION",
           "False", (NODE_SITE_SHARD_FORMAT,)),
    Mutant("node-site-shards-declared-catalogue-not-read", SHARDS, "load_shard",
           "int(z['n_declared']) if 'n_declared' in z.files else None", "None", (NODE_SITE_SHARD_FORMAT,)),
    Mutant("node-site-declared-federation-listing-a-site-twice", SHARDS, "write_shards",
           "unknown or len(set(declared)) != len(declared)", "unknown", (NODE_SITE_SHARD_ONLY,)),
    Mutant("node-site-shamir-duplicate-share-combined", NODE_SITE_SHAMIR, "combine_chunk",
           "len(set(indices)) != len(indices)", "False", (NODE_SITE_SHAMIR_REFUSED,)),
    Mutant("node-site-shamir-zero-index-combined", NODE_SITE_SHAMIR, "combine_chunk", "0 in indices", "False",
           (NODE_SITE_SHAMIR_REFUSED,)),
    Mutant("node-site-shamir-one-share-fewer-than-given", NODE_SITE_SHAMIR, "combine_chunk",
           "zip(shares, _basis_at_zero(indices))", "zip(shares[:-1], _basis_at_zero(indices[:-1]))",
           (NODE_SITE_SHAMIR_EQUAL,)),
    Mutant("node-site-gf128-reduced-one-bit-early", NODE_SITE_SHAMIR, "_gf128_mul", "f1 >> 128", "f1 >> 127",
           (NODE_SITE_GF128,)),
    Mutant("node-site-ca-may-sign-further-cas", SECURITY, "make_tls", "x509.BasicConstraints(ca=True, path_length=0)",
           "x509.BasicConstraints(ca=True, path_length=None)", (NODE_SITE_CA,)),
    # the third ``ca_key`` of make_tls is the one the server certificate is signed with
    Mutant("node-site-server-certificate-signed-by-its-own-key", SECURITY, "make_tls", "ca_key", "key",
           (NODE_SITE_CA,), nth=2),
    Mutant("node-site-node-key-of-any-kind-registered", SECURITY, "load_public_key",
           "not isinstance(key, ec.EllipticCurvePublicKey)", "False", (NODE_SITE_NODE_KEY,)),
    Mutant("node-site-every-node-given-the-first-sites-policy", LAUNCHER, "LocalFederation._start",
           "self.site_policies[h]", "self.site_policies[0]", (NODE_SITE_ARGV,)),
    Mutant("node-site-every-node-signs-with-the-first-key", LAUNCHER, "LocalFederation._start",
           "keys[h].private", "keys[0].private", (NODE_SITE_ARGV,)),
    Mutant("node-site-node-does-not-verify-the-superlink", LAUNCHER, "LocalFederation._start",
           "node += ['--root-certificates', str(self.tls.ca), '--auth-supernode-private-key', str(keys[h].private), "
           "'--ssl-certfile', str(self.tls.cert), '--ssl-keyfile', str(self.tls.key), '--ssl-ca-certfile', "
           "str(self.tls.ca)]",
           "node += ['--auth-supernode-private-key', str(keys[h].private), '--ssl-certfile', str(self.tls.cert), "
           "'--ssl-keyfile', str(self.tls.key), '--ssl-ca-certfile', str(self.tls.ca)]", (NODE_SITE_ARGV,)),
    Mutant("node-site-superlink-without-node-authentication", LAUNCHER, "LocalFederation._start",
           "link += ['--ssl-ca-certfile', str(self.tls.ca), '--ssl-certfile', str(self.tls.cert), '--ssl-keyfile', "
           "str(self.tls.key), '--enable-supernode-auth']",
           "link += ['--ssl-ca-certfile', str(self.tls.ca), '--ssl-certfile', str(self.tls.cert), '--ssl-keyfile', "
           "str(self.tls.key)]", (NODE_SITE_ARGV,)),
    Mutant("node-site-node-keys-never-registered", LAUNCHER, "LocalFederation._start",
           "self.control.register([k.public for k in keys])", "None", (NODE_SITE_ARGV,)),
    Mutant("node-site-site-command-reads-a-store-it-creates", "dpfed_core/cli/site_cmd.py", "_store",
           "not path.exists()", "False", (NODE_SITE_SITE_CMD,)),
    Mutant("node-site-site-command-store-of-no-site", "dpfed_core/cli/site_cmd.py", "_store",
           "'{site}' in str(policy.store) and (not args.site)", "False", (NODE_SITE_SITE_CMD,)),
    Mutant("node-site-site-command-run-accepted-outside-withdraw", "dpfed_core/cli/site_cmd.py", "cmd_site",
           "(args.what == 'withdraw') != bool(args.run)", "args.what == 'withdraw' and (not args.run)",
           (SITE_WITHDRAWS,)),
    Mutant("node-site-only-the-first-sites-own-policy-checked", NODE_SITE_DEPLOYED, "check_site_policy",
           "list(zip(dataset.entity_names, sites))[:1 if shared else None]",
           "list(zip(dataset.entity_names, sites))[:1]", (NODE_SITE_OWN_POLICIES,)),
    Mutant("node-site-policies-of-another-count-than-the-sites", NODE_SITE_DEPLOYED, "check_site_policy",
           "dataset is not None and (not shared) and (len(paths) != dataset.n_entities)", "False",
           (NODE_SITE_OWN_POLICIES,)),
    Mutant("node-site-missing-store-folder-found-only-by-the-sites", NODE_SITE_DEPLOYED, "check_site_policy",
           "policy.check_store_folder(entity)", "None", (NODE_SITE_OWN_POLICIES,)),
    Mutant("node-site-policy-of-another-site-given-to-every-site", NODE_SITE_DEPLOYED, "check_site_policy",
           "policy.site and policy.site != entity", "False", (NODE_SITE_SHARED_POLICY,)),
    Mutant("node-site-precheck-row-bound-at-the-largest-catalogue", NODE_SITE_DEPLOYED, "check_site_policy",
           "request_of(config, dataset.n_entities, float(dataset.value_max))", "None", (NODE_SITE_ROW_BOUND,),
           arg="n_items"),
    Mutant("node-site-node-outside-the-federation-identified", NODE_SITE_SERVER, "_Run.identify",
           "any((not 0 <= h < self.n_entities for h in by_index))", "False", (NODE_SITE_IDENTIFY,)),
    Mutant("node-site-write-shards-out-dir-found-a-file-after-the-load", "dpfed_core/cli/deploy_cmd.py",
           "cmd_write_shards", "_check_out_dir(args.out_dir)", "None", (NODE_SITE_OUT_DIR,)),
    Mutant("node-site-shard-folder-called-missing", SHARDS, "load_shard",
           "'is a folder, not a shard file' if p.is_dir() else 'does not exist'", "'does not exist'",
           (NODE_SITE_FOLDER_PATHS,)),
    Mutant("site-policy-unbounded-value-bounds-said-as-out-of-order", SITE, "_checked_policy",
           "not all(math.isfinite(b) for b in bounds)", "False", (BAD_POLICY,)),
    Mutant("dry-run-loader-notes-unsaid", BUDGET_CMD, "dry_run", "getattr(dataset, 'notes', ())", "()",
           ("tests/test_cli.py::test_a_dry_run_states_what_the_loader_inferred_merged_or_accepted",)),
    Mutant("chart-composed-bars-request-line-at-the-coalition", PLOTS, "privacy_composed_bars",
           "(requested, 'requested ε', 'dash')", "(coalition, 'requested ε', 'dash')", (CHART_COMPOSED,)),
    Mutant("chart-composed-bars-a-running-total-over-entities", PLOTS, "privacy_composed_bars",
           "fig.add_bar()", "ORIG.cumsum()", (CHART_COMPOSED,), arg="y", nth=0),
    Mutant("chart-composed-bars-coalition-line-at-the-request", PLOTS, "privacy_composed_bars",
           "(coalition, 'ε against the server + all other entities', 'dot')",
           "(requested, 'ε against the server + all other entities', 'dot')", (CHART_COMPOSED,)),
    Mutant("chart-report-coalition-line-without-secure-aggregation", RSECTIONS, "_privacy",
           "_f(coal) if secure and coal is not None else None", "_f(coal) if coal is not None else None",
           (CHART_SECURE,)),
    Mutant("chart-report-request-line-at-the-coalition-epsilon", RSECTIONS, "_privacy",
           "privacy_composed_bars(per_entity, _f(p.get('requested_epsilon')))", "_f(coal)", (CHART_SECURE,),
           arg=1),
    Mutant("chart-tradeoff-dp-reference-infinity-stated-at-its-x", PLOTS, "tradeoff_chart",
           "'∞ (non-private)' if np.isinf(e) else f'{e:g}'", "f'{e:g}'", (CHART_DP_REF,)),
    Mutant("chart-tradeoff-dp-reference-hover-of-the-metric-key", PLOTS, "tradeoff_chart",
           "_esc(metric_label or metric)", "_esc(metric)", (CHART_DP_REF,), nth=2),
    Mutant("chart-tradeoff-reference-named-as-the-swept-method", PLOTS, "tradeoff_chart",
           "labels.get(ref, ref)", "labels.get(method, method)", (CHART_TRADEOFF,)),
    Mutant("chart-tradeoff-swept-method-named-by-its-key", PLOTS, "tradeoff_chart",
           "labels.get(method, method)", "method", (CHART_TRADEOFF,)),
    Mutant("chart-tradeoff-infinite-point-from-the-first-row", PLOTS, "tradeoff_chart",
           "inf_row['mean'].iloc[0]", "d['mean'].iloc[0]", (CHART_TRADEOFF,)),
    Mutant("chart-tradeoff-infinite-spread-from-the-first-row", PLOTS, "tradeoff_chart",
           "inf_row['sd'].iloc[0]", "d['sd'].iloc[0]", (CHART_TRADEOFF,)),
    Mutant("chart-tradeoff-reference-line-at-the-swept-mean", PLOTS, "tradeoff_chart",
           "float(r['mean'].iloc[0])", "float(d['mean'].iloc[0])", (CHART_TRADEOFF,)),
    Mutant("chart-tradeoff-axis-titled-by-the-metric-key", PLOTS, "tradeoff_chart",
           "fig.update_yaxes(title=metric_label or metric)", "fig.update_yaxes(title=metric)",
           (CHART_TRADEOFF,)),
    Mutant("chart-bars-not-aligned-to-their-entities", PLOTS, "metric_bars",
           "df[df['method'] == m].assign(entity=lambda x: x['entity'].astype(str)).set_index('entity')"
           ".reindex(entities)",
           "df[df['method'] == m].assign(entity=lambda x: x['entity'].astype(str)).set_index('entity')",
           (CHART_BARS,)),
    Mutant("chart-bars-axis-titled-by-the-metric-key", PLOTS, "metric_bars", "metric_label or metric",
           "metric", (CHART_BARS,)),
    Mutant("chart-bars-legend-by-the-method-key", PLOTS, "metric_bars", "(labels or {}).get(m, m)", "m",
           (CHART_BARS,)),
    Mutant("chart-dots-every-method-at-the-first-methods-values", PLOTS, "metric_dots", "wide[m]",
           "wide[first]", (CHART_DOTS,)),
    Mutant("chart-audit-chart-claimed-epsilon-drawn-as-the-bound", RFIGURES, "audit_epsilon_figure",
           "[_f(r['epsilon_lb']) for r in part]", "[_f(r['epsilon']) for r in part]", (CHART_AUDIT_EPS,)),
    Mutant("chart-audit-chart-ceiling-of-the-fewest-runs", RFIGURES, "audit_epsilon_figure",
           "max((_f(r.get('max_certifiable_epsilon')) for r in summ), default=math.nan)",
           "min((_f(r.get('max_certifiable_epsilon')) for r in summ), default=math.nan)", (CHART_AUDIT_EPS,)),
    Mutant("chart-audit-chart-hover-claims-the-lower-bound", RFIGURES, "audit_epsilon_figure",
           "fmt_eps(r['epsilon'])", "fmt_eps(r['epsilon_lb'])", (CHART_AUDIT_EPS,)),
    Mutant("chart-audit-chart-claims-joined-in-the-order-they-ran", RFIGURES, "audit_epsilon_figure",
           "sorted((r for r in pts if math.isfinite(_f(r['epsilon']))), key=lambda r: _f(r['epsilon']))",
           "[r for r in pts if math.isfinite(_f(r['epsilon']))]", (CHART_AUDIT_ORDER,)),
    Mutant("chart-audit-roc-curves-of-every-attack", RFIGURES, "audit_roc_figure",
           "[r for r in audit_doc['results'] if r['attack'] == drawn[r['method']]]", "list(audit_doc['results'])",
           (CHART_ROC,)),
    Mutant("chart-audit-roc-title-names-the-attack-asked-not-drawn", RFIGURES, "audit_roc_figure",
           "f\"ROC — {chosen} — attack: {', '.join(attacks)}\"", "f'ROC — {chosen} — attack: {attack}'",
           (CHART_ROC_SUMMABLE,)),
    Mutant("chart-audit-roc-curves-of-two-attacks-unnamed", RFIGURES, "audit_roc_figure", "len(attacks) > 1",
           "False", (CHART_ROC_SUMMABLE,)),
    Mutant("chart-audit-roc-summable-audit-drawn-by-every-attack", RFIGURES, "audit_roc_figure",
           "attack if attack in a else a[0]", "attack", (CHART_ROC_SUMMABLE,)),
    Mutant("chart-paper-secure-aggregation-said-of-any-aggregation", PAPER_DIFF, "paper_differences",
           "config.get('aggregation') == 'secure'", "config.get('aggregation')", (CHART_PAPER,)),
    Mutant("chart-paper-prototype-parameter-over-the-methods-own", PAPER_DIFF, "_param",
           "{**(config.get('prototype_params') or {}), **(config.get('method_params') or {})}",
           "{**(config.get('method_params') or {}), **(config.get('prototype_params') or {})}", (CHART_PAPER,)),
    Mutant("chart-better-direction-inverted", "dpfed_core/evaluation/verdicts.py", "better_word",
           "metric in LOWER_IS_BETTER", "metric not in LOWER_IS_BETTER", (CHART_DIRECTION,)),
    Mutant("chart-mar-counted-higher-is-better", "dpfed_core/evaluation/experiments.py", MODULE,
           "{'train_rmse', 'test_rmse', 'mar'}", "{'train_rmse', 'test_rmse'}", (CHART_DIRECTION,)),
    Mutant("chart-report-mar-header-points-up", RSECTIONS, MODULE, "'MAR (↓)'", "'MAR (↑)'",
           (CHART_DIRECTION,)),
    Mutant("chart-report-recall-header-points-down", RSECTIONS, MODULE, "'recall@10 (↑)'", "'recall@10 (↓)'",
           (CHART_DIRECTION,)),
    Mutant("chart-public-report-prints-the-audits-results", RSECTIONS, "_audit", "public", "False",
           ("tests/test_report.py::test_public_report_holds_no_number_computed_on_private_data",), nth=0),
    Mutant("chart-report-every-method-given-the-runs-metrics", RSECTIONS, "_utility",
           "d.get('overall', {}).get(k)", "run.get('overall', {}).get(k)",
           ("tests/test_report.py::test_values_match_the_run",)),
    Mutant("tradeoff-chart-crossing-baseline-unnamed", "dpfed_core/reporting/plots.py", "tradeoff_chart",
           "crossing_against", "None", ("tests/test_report_charts.py::test_the_crossing_is_marked_with_the_baseline_it_"
                                        "crosses",), nth=1),
    Mutant("report-tradeoff-crossing-baseline-not-passed", "dpfed_core/reporting/report_sections.py", "_tradeoff",
           "tradeoff_chart(pd.DataFrame(table), method, metric)", "None",
           ("tests/test_report.py::test_the_tradeoff_chart_marks_where_federation_pays_against_the_first_baseline_of_"
            "the_sweep",), arg="crossing_against"),
    # each site's own model in round 2: its hold-out, its blend weights, its own items and what it recommends
    Mutant("own-model-holdout-rank-counts-the-hidden-item-as-its-own-tie", BLEND, "holdout_mar",
           "ties = (S == s_h[:, None]).sum(1) - 1", "ties = (S == s_h[:, None]).sum(1)", (OWN_MODEL_CACHED,)),
    Mutant("own-model-holdout-rank-over-the-hidden-item-too", BLEND, "holdout_mar", "np.maximum(n_cand - 1, 1)",
           "np.maximum(n_cand, 1)", (OWN_MODEL_CACHED,)),
    Mutant("own-model-holdout-training-items-left-as-candidates", BLEND, "_HoldoutScores._block_ranks",
           "S[self.ex_rows[a:b] - start, self.ex_cols[a:b]] = -np.inf", "pass", (OWN_MODEL_CACHED,)),
    Mutant("own-model-weight-search-keeps-the-worse-weight", BLEND, "choose_weights", "r < best - 1e-12",
           "r > best + 1e-12", (OWN_MODEL_PICKS,)),
    Mutant("own-model-evidence-difference-default-minus-search", BLEND, "choose_weights",
           "holdout.ranks(wm, item_vector(wi)) - holdout.ranks(d_m, item_vector(d_i))",
           "holdout.ranks(d_m, item_vector(d_i)) - holdout.ranks(wm, item_vector(wi))", (OWN_MODEL_EVIDENCE,)),
    Mutant("own-model-standard-error-over-n-not-its-root", BLEND, "_clearly_lower", "math.sqrt(diff.size)",
           "diff.size", (OWN_MODEL_CLEARLY,)),
    Mutant("own-model-hold-out-item-parts-read-the-hidden-entries", BLEND, "fit_blend",
           "vecs = [_unit(part(reduced)) for part in item_parts]", "vecs = [_unit(part(X)) for part in item_parts]",
           (OWN_MODEL_HOLDOUT_ITEM_PARTS,)),
    Mutant("own-model-hold-out-matrix-parts-fitted-on-the-hidden-entries", BLEND, "fit_blend",
           "reduced if fit_rows is None else reduced[fit_rows]", "X if fit_rows is None else X[fit_rows]",
           (OWN_MODEL_HIDDEN_FACTORS,)),
    Mutant("own-model-refit-item-part-not-unit", BLEND, "fit_blend", "_unit(part(X))[:, None]", "part(X)[:, None]",
           (BLEND_WEIGHTS,)),
    Mutant("own-model-matrix-part-not-scaled-to-unit-rows", BLEND, "_unit_factors",
           "U * _inverse_row_norms(U, V)[:, None]", "U", (BLEND_WEIGHTS,)),
    Mutant("own-model-reported-weights-of-matrix-and-item-parts-swapped", BLEND, "fit_blend",
           "{'matrix_weights': wm, 'item_weights': wi, 'holdout_mar': best, 'blocks': blocks}",
           "{'matrix_weights': wi, 'item_weights': wm, 'holdout_mar': best, 'blocks': blocks}", (BLEND_WEIGHTS,)),
    Mutant("own-model-small-holdout-default-weights-swapped", BLEND, "fit_blend",
           "(list(default[0]), list(default[1]), math.nan)", "(list(default[1]), list(default[0]), math.nan)",
           (OWN_MODEL_FEW_USERS,), nth=0),
    Mutant("own-model-no-holdout-default-weights-swapped", BLEND, "fit_blend",
           "(list(default[0]), list(default[1]), math.nan)", "(list(default[1]), list(default[0]), math.nan)",
           (OWN_MODEL_NO_HOLDOUT,), nth=1),
    Mutant("own-model-alone-default-keeps-the-federations-popularity", BLEND, "fit_site_model",
           "[1.0 if name == 'own popularity' else 0.0 for name in inames]",
           "[1.0 if name == 'dp popularity' else 0.0 for name in inames]", (OWN_MODEL_ALONE,)),
    Mutant("own-model-shrinkage-keeps-lambda-of-the-sites-own", BLEND, "shrunk_popularity_parts",
           "own[S] *= 1.0 - lam", "own[S] *= lam", (OWN_MODEL_EB,)),
    Mutant("own-model-shrinkage-gives-the-federation-one-minus-lambda", BLEND, "shrunk_popularity_parts",
           "lam * mass / float(g[S].sum())", "(1.0 - lam) * mass / float(g[S].sum())", (OWN_MODEL_EB,)),
    Mutant("own-model-eb-weight-inverted", BLEND, "_eb_weight", "V / (V + D) if V + D > 0 else 0.0",
           "D / (V + D) if V + D > 0 else 0.0", (OWN_MODEL_EB_WEIGHT,)),
    Mutant("own-model-value-scale-inverted", BLEND, "value_scale", "xs / ss if ss > 0 and xs > 0 else 1.0",
           "ss / xs if ss > 0 and xs > 0 else 1.0", (OWN_MODEL_VALUE_SCALE,)),
    Mutant("own-model-released-rows-drop-the-own-models-draw", BLEND, "released_drop", "_site_streams(X)[0]",
           "_site_streams(X)[1]", (OWN_MODEL_RELEASED,)),
    Mutant("own-model-own-nmf-factors-on-the-first-columns", BLEND, "own_nmf", "V[used] = V_used",
           "V[:used.size] = V_used", (OWN_MODEL_OWN_NMF,)),
    Mutant("own-model-own-nmf-fitted-on-every-column-of-a-sparse-site", BLEND, "own_nmf",
           "used.size == X.shape[1] and X.has_canonical_format", "X.has_canonical_format", (OWN_MODEL_OWN_NMF,)),
    Mutant("own-model-shared-key-zero-not-shared", "dpfed_core/models/shared_items.py", "SharedItems.columns",
           "np.flatnonzero(self.item_key >= 0)", "np.flatnonzero(self.item_key > 0)", (OWN_MODEL_LIFT,)),
    Mutant("own-model-entity-of-a-user-looked-up-on-the-left", EFAC, "EntityFactors.scores",
           "np.searchsorted(self._starts, rows, side='right')", "np.searchsorted(self._starts, rows, side='left')",
           (OWN_MODEL_OWN_PRODUCT,)),
    Mutant("own-model-own-columns-read-at-the-global-row", EFAC, "EntityFactors.scores",
           "loc.U[rows[mask] - self.slices[h].start]", "loc.U[rows[mask]]", (OWN_MODEL_OWN_PRODUCT,)),
    Mutant("own-model-entity-given-the-previous-entitys-own-columns", EFAC, "EntityFactors.entity",
           "(self.slices[h], self.local[h])", "(self.slices[h], self.local[h - 1])", (OWN_MODEL_OWN_PRODUCT,)),
    Mutant("own-model-wider-axis-keeps-own-columns-on-their-old-items", EFAC, "EntityFactors.on_items",
           "LocalColumns(loc.U, cols[loc.items], loc.L)", "LocalColumns(loc.U, loc.items, loc.L)",
           (OWN_MODEL_ON_ITEMS,)),
    Mutant("own-model-local-columns-keep-only-rows-without-a-zero", EFAC, "LocalColumns.from_dense",
           "np.any(L_full != 0.0, axis=1)", "np.all(L_full != 0.0, axis=1)", (OWN_MODEL_NONZERO_ROWS,)),
    Mutant("own-model-recommend-shows-seen-items", PROTO, "recommend_from_factors", "scores[seen] = -np.inf", "pass",
           (OWN_MODEL_EXCLUDE_SEEN,)),
    Mutant("own-model-recommend-hides-the-held-out-items", PROTO, "recommend_from_factors",
           "seen = X_train[row].indices", "seen = dataset.X[row].indices", (OWN_MODEL_RECOMMEND,)),
    Mutant("own-model-recommend-ties-by-the-higher-item", PROTO, "recommend_from_factors",
           "np.argsort(-scores, kind='stable')", "np.argsort(scores, kind='stable')[::-1]", (OWN_MODEL_RECOMMEND,)),
    Mutant("own-model-recommend-pads-with-seen-items", PROTO, "recommend_from_factors",
           "n = min(n, int(np.isfinite(scores).sum()))", "pass", (OWN_MODEL_RECOMMEND,)),
    Mutant("own-model-user-id-found-as-a-position", PROTO, "user_row", "sl.start + int(hits[0])", "int(hits[0])",
           (OWN_MODEL_RECOMMEND,)),
    Mutant("own-model-server-fit-without-ridge", PROTO, "FederatedRecommender._fit_prototypes",
           "fit_nmf(P_fit, self.rank, self.lam, self.mode)", "0.0", (OWN_MODEL_RIDGE,), arg=2),
    Mutant("own-model-round-two-row-fit-without-ridge", PROTO, "FederatedRecommender._fit_prototypes",
           "(X[sl], self.V_, self.lam, self.mode)", "(X[sl], self.V_, 0.0, self.mode)", (OWN_MODEL_RIDGE,)),
    Mutant("own-model-prototype-round-two-forgets-the-sites-own-items", PROTO,
           "FederatedRecommender._round2_on_known_items", OWN_MODEL_ROUND2_FIT,
           OWN_MODEL_ROUND2_FIT[:-1] + ", own=False)", (OWN_MODEL_OWN_ITEMS,)),
    Mutant("own-model-prototype-round-one-reads-the-validation-entries", PROTO, "FederatedRecommender._fit_prototypes",
           "shared.project(released_rows(X[sl]))", "shared.project(X[sl])", (OWN_MODEL_OWN_ITEMS,)),
    Mutant("own-model-prototype-round-two-not-masked-to-known-names", PROTO,
           "FederatedRecommender._round2_on_known_items", OWN_MODEL_ROUND2_FIT, "False", (OWN_MODEL_OWN_ITEMS,),
           arg="known_only"),
    Mutant("own-model-converged-before-two-objectives", FACTOR, "converged",
           "if len(history) < 2:\n    return False", "if len(history) < 2:\n    return True", (OWN_MODEL_CONVERGED,)),
    Mutant("own-model-round-two-zero-mode-row-fit-without-ridge", FACTOR, "fit_rows_given",
           "_hals_sweep(A, U, B, lam, track=True)", "_hals_sweep(A, U, B, 0.0, track=True)",
           (f"{OWN_MODEL_NNLS}[zero]",)),
    Mutant("own-model-round-two-observed-row-fit-without-ridge", FACTOR, "fit_rows_given",
           "_observed_sweeps(sp.csr_matrix(X), U, V, lam, max_sweeps, tol)", "0.0", (f"{OWN_MODEL_NNLS}[observed]",),
           arg=3),
    Mutant("own-model-prototype-weights-not-square-rooted", FACTOR, "fit_nmf",
           "np.sqrt(np.maximum(np.asarray(weights, dtype=np.float64), 0.0))",
           "np.maximum(np.asarray(weights, dtype=np.float64), 0.0)", (OWN_MODEL_DUPLICATION,)),
    Mutant("own-model-nmf-update-without-ridge", FACTOR, "update_factor", "_hals_sweep(A, W, B, lam)",
           "_hals_sweep(A, W, B, 0.0)", (OWN_MODEL_UPDATE_RIDGE,)),
    Mutant("own-model-zero-fit-stops-at-once", FACTOR, "fit_nmf", "converged(history, tol)", "True",
           (f"{OWN_MODEL_STOPS}[zero]",)),
    Mutant("own-model-observed-fit-stops-at-once", FACTOR, "_observed_fit", "converged(history, tol)", "True",
           (f"{OWN_MODEL_STOPS}[observed]",)),
    Mutant("own-model-message-sender-and-receiver-swapped", "dpfed_core/federation/messages.py", "array_message",
           "Message(round_, sender, receiver)",
           "Message(round_, receiver, sender, content, tuple((int(s) for s in arr.shape)), int(arr.nbytes))",
           (OWN_MODEL_MESSAGES,)),
    Mutant("own-model-release-of-another-width-accepted", PROTO, "check_release",
           "P.ndim != 2 or P.shape[1] != n_columns", "P.ndim != 2", (OWN_MODEL_RELEASE_SHAPE,)),
    Mutant("own-model-cluster-sizes-of-other-prototypes-accepted", PROTO, "check_release",
           "release.counts is not None and np.shape(release.counts) != (P.shape[0],)", "False",
           (OWN_MODEL_RELEASE_SHAPE,)),
    Mutant("own-model-krandom-sends-the-first-rows", PROTOS, "KRandomPrototypes.release", "X[idx].toarray()",
           "X[:k].toarray()", (OWN_MODEL_KRANDOM,)),
    # Xin & Jaakkola as the paper states it: the heaviest users public, the M-step's soft threshold on either
    # path, the E-step's centred Eq. 4, EM run to its tolerance, private rows frozen at their weights, PMC's
    # signs and h, PMD's permuted candidates and their search, the stream's settings, each entity's charge
    Mutant("systems-xin-public-lightest", XIN_PY, "select_public_users",
           "np.argsort(-np.diff(sp.csr_matrix(X).indptr), kind='stable')",
           "np.argsort(np.diff(sp.csr_matrix(X).indptr), kind='stable')", (SYSTEMS_HEAVIEST,)),
    Mutant("systems-xin-public-count-ignored", XIN_PY, "select_public_users",
           "n_public if n_public is not None else max(1, int(math.ceil(fraction * n)))",
           "max(1, int(math.ceil(fraction * n)))", (SYSTEMS_HEAVIEST,)),
    Mutant("systems-xin-gram-directions-unnormalised", XIN_PY, "shrink_step",
           "Ul[:, order[big]].T @ A / d[big][:, None]", "Ul[:, order[big]].T @ A", (SYSTEMS_GRAM,)),
    Mutant("systems-xin-gram-wide-ascending", XIN_PY, "shrink_step", "np.argsort(w)[::-1]", "np.argsort(w)",
           (SYSTEMS_GRAM,), nth=0),
    Mutant("systems-xin-gram-tall-ascending", XIN_PY, "shrink_step", "np.argsort(w)[::-1]", "np.argsort(w)",
           (SYSTEMS_GRAM,), nth=1),
    Mutant("systems-xin-gram-eigenvectors-untransposed", XIN_PY, "shrink_step", "Qv[:, order].T", "Qv[:, order]",
           (SYSTEMS_GRAM,)),
    Mutant("systems-xin-singular-values-unshrunk", XIN_PY, "shrink_step", "np.sqrt(d[keep] - tau)",
           "np.sqrt(d[keep])", (SYSTEMS_SOFT, SYSTEMS_GRAM)),
    Mutant("systems-xin-row-weights-unsquarerooted", XIN_PY, "shrink_step",
           "rows * np.sqrt(np.asarray(weights, dtype=float))[:, None]",
           "rows * np.asarray(weights, dtype=float)[:, None]",
           (SYSTEMS_SOFT,)),
    Mutant("systems-xin-eq4-uncentred", XIN_PY, "local_factors", "Vp.T @ (X.data[lo:hi] - mu[idx])",
           "Vp.T @ X.data[lo:hi]", (SYSTEMS_ESTEP,)),
    Mutant("systems-xin-eq4-without-rho", XIN_PY, "local_factors", "eye = rho * np.eye(r)", "eye = np.eye(r)",
           (SYSTEMS_ESTEP,)),
    Mutant("systems-xin-observed-kept-uncentred", XIN_PY, "complete_rows",
           "C[rows, X.indices] = X.data - mu[X.indices]",
           "C[rows, X.indices] = X.data", (SYSTEMS_ESTEP,)),
    Mutant("systems-xin-observed-replaced-by-the-fit", XIN_PY, "complete_rows",
           "C[rows, X.indices] = X.data - mu[X.indices]", "pass", (SYSTEMS_ESTEP,)),
    Mutant("systems-xin-em-one-pass", XIN_PY, "fit_em", "range(1, max_iter + 1)", "range(1, 2)", (SYSTEMS_EM,)),
    Mutant("systems-xin-em-never-converges", XIN_PY, "fit_em", "prev = C", "pass", (SYSTEMS_EM,)),
    Mutant("systems-xin-private-rows-left-out", XIN_PY, "fit_em", "extra_rows is not None and len(extra_rows)",
           "False", (SYSTEMS_FROZEN,)),
    Mutant("systems-xin-private-weights-misaligned", XIN_PY, "fit_em",
           "np.concatenate([np.ones(len(C)), np.asarray(extra_weights, dtype=float)])",
           "np.concatenate([np.asarray(extra_weights, dtype=float), np.ones(len(C))])", (SYSTEMS_FROZEN,)),
    Mutant("systems-xin-warm-start-ignored", XIN_PY, "fit_em", "np.zeros((X.shape[1], 0)) if V0 is None else V0",
           "np.zeros((X.shape[1], 0))", (SYSTEMS_FROZEN,)),
    Mutant("systems-xin-pmc-h-root-mean-square", XIN_PY, "pmc_release", "float(np.mean(np.abs(r)))",
           "float(np.sqrt(np.mean(r * r)))", (SYSTEMS_PMC, SYSTEMS_PMC_FLIP)),
    Mutant("systems-xin-pmc-public-h-ignored", XIN_PY, "pmc_release",
           "float(np.mean(np.abs(r))) if h is None else float(h)", "float(np.mean(np.abs(r)))", (SYSTEMS_PMC,)),
    Mutant("systems-xin-pmc-zero-released-as-zero", XIN_PY, "pmc_release",
           "z[zero] = rng.choice([-1.0, 1.0], size=int(zero.sum()))", "pass", (SYSTEMS_PMC,)),
    Mutant("systems-xin-pmc-no-global-flip", XIN_PY, "pmc_release", "rng.choice([-1.0, 1.0]) * hh * z", "hh * z",
           (SYSTEMS_PMC_FLIP,)),
    Mutant("systems-xin-pmd-candidates-drawn-independently", XIN_PY, "pmd_release",
           "S[np.argsort(rng.random((K, m)), axis=0)]", "rng.choice(S, size=(K, m))", (SYSTEMS_PERM,)),
    Mutant("systems-xin-pmd-swap-copies", XIN_PY, "pmd_release", "A[p, i], A[q, i] = (b, a)", "A[p, i] = b",
           (SYSTEMS_PERM,)),
    Mutant("systems-xin-pmd-loss-sign", XIN_PY, "pmd_release.loss", "nv * nv - 2 * dv * dv", "nv * nv + 2 * dv * dv",
           (SYSTEMS_ALIGN,)),
    Mutant("systems-xin-pmd-keeps-worse-swaps", XIN_PY, "pmd_release",
           "loss(np_, dp) + loss(nq, dq) < loss(nrm[p], dot[p]) + loss(nrm[q], dot[q])",
           "loss(np_, dp) + loss(nq, dq) > loss(nrm[p], dot[p]) + loss(nrm[q], dot[q])", (SYSTEMS_ALIGN,)),
    Mutant("systems-xin-pmd-completion-unrounded", XIN_PY, "XinJaakkola._stream",
           "S[np.argmin(np.abs(r[:, None] - S[None, :]), axis=1)]", "r", (SYSTEMS_PMD_STREAM,)),
    Mutant("systems-xin-pmd-search-settings-dropped", XIN_PY, "XinJaakkola._stream",
           "pmd_release(r_s, mu, S, rng, self.pmd_sweeps, self.pmd_tries)", "pmd_release(r_s, mu, S, rng)",
           (SYSTEMS_PMD_STREAM,)),
    Mutant("systems-xin-pmd-sweeps-and-tries-swapped", XIN_PY, "XinJaakkola._stream",
           "pmd_release(r_s, mu, S, rng, self.pmd_sweeps, self.pmd_tries)",
           "pmd_release(r_s, mu, S, rng, self.pmd_tries, self.pmd_sweeps)", (SYSTEMS_PMD_STREAM,)),
    Mutant("systems-xin-pmc-uncentred", XIN_PY, "XinJaakkola._stream", "pmc_release(r - mu, rng)",
           "pmc_release(r, rng)",
           (SYSTEMS_PMC_STREAM,)),
    Mutant("systems-xin-batch-of-twenty-always", XIN_PY, "XinJaakkola._stream", "range(0, len(private), self.batch)",
           "range(0, len(private), 20)", (SYSTEMS_WEIGHT, SYSTEMS_PMD_STREAM)),
    Mutant("systems-xin-max-rank-not-passed", XIN_PY, "XinJaakkola.fit",
           "fit_em(Xp, self.tau, max_rank=self.max_rank, max_iter=self.max_iter, tol=self.tol)",
           "fit_em(Xp, self.tau, max_iter=self.max_iter, tol=self.tol)", (SYSTEMS_MODEL,)),
    Mutant("systems-xin-max-iter-not-passed", XIN_PY, "XinJaakkola.fit",
           "fit_em(Xp, self.tau, max_rank=self.max_rank, max_iter=self.max_iter, tol=self.tol)",
           "fit_em(Xp, self.tau, max_rank=self.max_rank, tol=self.tol)", (SYSTEMS_MODEL,)),
    Mutant("systems-xin-local-ridge-not-tau", XIN_PY, "XinJaakkola.fit", "local_factors(X, mu, V, self.tau)",
           "local_factors(X, mu, V, 1.0)", (SYSTEMS_MODEL,)),
    Mutant("systems-xin-full-em-on-the-public-share", XIN_PY, "XinJaakkola.fit", "self.mechanism == 'full'", "False",
           (SYSTEMS_MODEL,)),
    Mutant("systems-xin-entity-private-count-includes-public", XIN_PY, "_make_fit.fit", "len(rows) - len(pub)",
           "len(rows)", (SYSTEMS_ENTITY,)),
    Mutant("systems-xin-private-users-uncharged", XIN_PY, "_make_fit.fit",
           "ledger.spend(name, 'private users', f'{mechanism.upper()} release (not DP)', math.inf)", "pass",
           (SYSTEMS_ENTITY,)),
    Mutant("systems-xin-pmd-counts-rounded-onto-one-to-five", XIN_PY, "check_pmd_scale",
           "dataset.value_kind == 'ratings' or (config.params or {}).get('values') is not None", "True",
           (SYSTEMS_NO_SCALE,)),
    Mutant("systems-xin-pmd-single-value-accepted", XIN_PY, "XinJaakkola.fit", "len(S) < 2", "len(S) < 1",
           (SYSTEMS_PMD_SET,)),
    Mutant("systems-xin-pmd-repeated-values-accepted", XIN_PY, "XinJaakkola.fit", "len(np.unique(S)) != len(S)",
           "False", (SYSTEMS_PMD_SET,)),
    Mutant("systems-xin-zero-tau-past-its-parameter-check", SPECS, MODULE,
           "Param('tau', 'float', 10.0, 'singular-value threshold τ of the trace-norm EM', low=0, low_open=True)",
           "False", (SYSTEMS_NAMED,), arg="low_open"),
    Mutant("systems-xin-public-count-refusal-names-no-control", XIN_PY, "select_public_users",
           "ConfigError(f'n_public, the number of public users, must be between 1 and the {n} users of the data, "
           "got {k}', param='prototype_params')", "None", (SYSTEMS_NAMED,), arg="param"),
    # Friedman et al.'s noise at the paper's sensitivities and stabilisers; FCF's Adam descending
    Mutant("systems-fri-psgd-error-sensitivity-b", FRIEDMAN, "FriedmanMF._fit_psgd", "dr = 2 * B", "dr = B",
           (f"{FRIT}::test_psgd_bounded_noise_scale_and_budget",)),
    Mutant("systems-fri-isgd-rating-sensitivity-b", FRIEDMAN, "perturb_ratings_bounded", "dr = 2 * B", "dr = B",
           (f"{FRIT}::test_input_perturbation_bounded_scale_and_laplace_fit",)),
    Mutant("systems-fri-item-averages-unstabilised", FRIEDMAN, "private_global_effects",
           "_noisy_average(sums, R.item_counts(), g, beta_m, ss, cs, rng)", "0.0",
           (f"{FRIT}::test_private_global_effects_noiseless_by_hand",), arg=3),
    Mutant("systems-fri-user-averages-toward-the-raw-mean", FRIEDMAN, "private_global_effects",
           "_noisy_average(usums, R.user_counts(), g2, beta_u, ss, cs, rng)", "g",
           (f"{FRIT}::test_private_global_effects_noiseless_by_hand",), arg=2),
    Mutant("systems-fri-unbounded-count-whole-share", FRIEDMAN, "private_global_effects.scales", "half = eps / 2",
           "half = eps", (f"{FRIT}::test_private_global_effects_noise_scales_match_paper",)),
    Mutant("systems-fri-pals-count-dropped", FRIEDMAN, "FriedmanMF._fit_pals.half_step",
           "g / (np.maximum(counts, 1) * lam)", "g / lam",
           (f"{FRIT}::test_pals_per_user_noise_scale_divides_by_count",)),
    Mutant("systems-fri-item-averages-unclamped", FRIEDMAN, "private_global_effects",
           "np.clip(_noisy_average(sums, R.item_counts(), g, beta_m, ss, cs, rng), r_min, r_max)",
           "_noisy_average(sums, R.item_counts(), g, beta_m, ss, cs, rng)",
           (f"{FRIT}::test_private_global_effects_noise_scales_match_paper",)),
    Mutant("systems-fri-user-averages-unclamped", FRIEDMAN, "private_global_effects",
           "np.clip(_noisy_average(usums, R.user_counts(), g2, beta_u, ss, cs, rng), -user_clamp, user_clamp)",
           "_noisy_average(usums, R.user_counts(), g2, beta_u, ss, cs, rng)",
           (f"{FRIT}::test_private_global_effects_noise_scales_match_paper",)),
    Mutant("systems-fri-psgd-every-epoch-at-the-whole-budget", FRIEDMAN, "FriedmanMF._fit_psgd",
           "_scale(dr, eps_mf / k)", "_scale(dr, eps_mf)", (f"{FRIT}::test_psgd_bounded_noise_scale_and_budget",)),
    Mutant("systems-fri-pals-half-steps-at-the-iterations-share", FRIEDMAN, "FriedmanMF._fit_pals",
           "eps_step = eps_mf / (2 * k)", "eps_step = eps_mf / k", (f"{FRIT}::test_pals_sensitivity_theorem6_table1",)),
    Mutant("systems-fri-unbounded-cell-sensitivity-2b", FRIEDMAN, "perturb_ratings_unbounded", "_scale(B, eps_mf)",
           "_scale(2 * B, eps_mf)", (f"{FRIT}::test_input_perturbation_unbounded_fake_ratings",)),
    Mutant("systems-fcf-adam-second-moment-unsquared", FCF_PY, "FCF.fit", "(1 - self.beta2) * g * g",
           "(1 - self.beta2) * np.abs(g)", (f"{FCFT}::test_one_fcf_epoch_reaches_the_als_item_step",)),
    Mutant("systems-fcf-untouched-item-error-sign", FCF_PY, "client_upload", "e = -(Y @ x_u)", "e = Y @ x_u",
           (f"{FCFT}::test_server_gradient_is_sum_of_client_uploads_and_true_gradient",)),
    Mutant("systems-fcf-adam-ascends", FCF_PY, "FCF.fit", "Y = Y - self.gamma * mh / (np.sqrt(vh) + self.adam_eps)",
           "Y = Y + self.gamma * mh / (np.sqrt(vh) + self.adam_eps)",
           (f"{FCFT}::test_one_fcf_epoch_reaches_the_als_item_step",)),
    Mutant("systems-fcf-confidence-without-one", FCF_PY, "solve_rows", "1.0 + alpha * C1.data", "alpha * C1.data",
           (f"{FCFT}::test_solve_rows_matches_eq7_and_zeroes_gradient",)),
    Mutant("systems-fcf-upload-unweighted", FCF_PY, "client_upload",
           "(1.0 + alpha * values) * (1.0 - Y[items] @ x_u)", "1.0 - Y[items] @ x_u",
           (f"{FCFT}::test_server_gradient_is_sum_of_client_uploads_and_true_gradient",)),
    # the deployed server checks each site reply where it arrives (shapes, finiteness, identity, ledger)
    Mutant("reply-prototype-width-unchecked", SERVER, "check_prototypes", REPLY_WIDTH, "P.ndim != 2",
           (f"{REPLY_BAD}[wide]", REPLY_UNITS)),
    Mutant("reply-prototype-dimensions-unchecked", SERVER, "check_prototypes", REPLY_WIDTH,
           "n_columns is not None and P.shape[1] != n_columns", (f"{REPLY_BAD}[flat]",)),
    Mutant("reply-prototype-width-off-by-one", SERVER, "check_prototypes", "P.shape[1] != n_columns",
           "P.shape[1] != n_columns + 1", (f"{REPLY_BAD}[wide]", REPLY_UNITS)),
    Mutant("reply-values-finiteness-unchecked", SERVER, "reply_array", "not np.all(np.isfinite(a))", "False",
           (f"{REPLY_BAD}[nan]", f"{REPLY_BAD}[counts-inf]")),
    Mutant("reply-counts-length-unchecked", SERVER, "check_prototypes", "c.shape != (P.shape[0],)", "False",
           (f"{REPLY_BAD}[counts-long]", REPLY_UNITS)),
    Mutant("reply-counts-check-skipped", SERVER, "_Run.round1_prototypes",
           "check_prototypes(site, r.content, n_columns, weighted)", "False",
           (f"{REPLY_BAD}[counts-long]",), arg=3),
    Mutant("reply-entity-name-unchecked", SERVER, "_Run.site_identity", REPLY_IDENTITY,
           "int(idx) != int(decided_index)", (f"{REPLY_BAD}[other-entity]",)),
    Mutant("reply-entity-index-unchecked", SERVER, "_Run.site_identity", REPLY_IDENTITY,
           "decided is not None and name != decided", (f"{REPLY_BAD}[round2-index]",)),
    Mutant("reply-round2-identity-unchecked", SERVER, "_Run.round2", "self.site_identity(r, 'round-2 acknowledgement')",
           "None", (f"{REPLY_BAD}[round2-index]",)),
    Mutant("reply-ledger-entity-unchecked", SERVER, "check_ledger", "parsed.entity != entity", "False",
           (f"{REPLY_BAD}[foreign-ledger]",)),
    Mutant("reply-ledger-round1-unchecked", SERVER, "_Run.round1_prototypes",
           "check_ledger(site, 'round-1 prototypes', r.content['meta'], site)", "None",
           (f"{REPLY_BAD}[bad-ledger]", f"{REPLY_BAD}[foreign-ledger]")),
    Mutant("reply-ledger-negative-epsilon-kept", SERVER, "check_ledger",
           "parsed.epsilon >= 0 and parsed.delta >= 0", "parsed.delta >= 0", (REPLY_UNITS,)),
    Mutant("reply-coalition-negative-kept", SERVER, "check_coalition",
           "isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0",
           "isinstance(value, bool) or not isinstance(value, (int, float))", (REPLY_UNITS,)),
    Mutant("reply-masked-length-unchecked", SERVER, "check_masked",
           "share.ndim != 1 or (length is not None and share.shape[0] != length)", "share.ndim != 1",
           (REPLY_MASKED, f"{REPLY_SHARE}[share-long]")),
    Mutant("reply-masked-finiteness-unchecked", SERVER, "check_masked",
           "not all((np.issubdtype(p.dtype, np.number) and np.all(np.isfinite(p)) for p in parts))", "False",
           (REPLY_MASKED,)),
    Mutant("reply-share-lengths-unchecked", SERVER, "_SecureSum.__call__._LoggingGrid.send_and_receive",
           "check_share_lengths(f'masked share ({label})', lengths)", "None", (f"{REPLY_SHARE}[share-long]",)),
    Mutant("reply-share-lengths-minority-named", SERVER, "check_share_lengths", "n != counts[0][0]",
           "n == counts[0][0]", (f"{REPLY_TESTS}::test_shares_of_a_method_that_states_no_length_must_agree_and_the_"
                                 "odd_site_is_named", f"{REPLY_SHARE}[share-long]")),
    Mutant("reply-sum-length-not-passed", SERVER, "_Run.round1_summable",
           "self.secure_sum(nodes, method, label if len(stages) > 1 else None, "
           "_SecureSum.share_length(method, group, n_items, public))", "None", (REPLY_COOC_WIDE,), arg=3),
    Mutant("reply-catalogue-buckets-off-by-one", SERVER, "_Run.round1_catalogue",
           "self.secure_sum(nodes, method, 'catalogue', cat.SECURE_CATALOGUE_BUCKETS)",
           "ORIG - 1", (f"{REPLY_SHARE}[catalogue-short]",), arg=3),
    Mutant("reply-unread-decision-taken-as-refusal", SERVER, "_Run.site_decisions",
           "str(r.content['meta']['decision']) not in ('accepted', 'refused')", "False",
           (f"{REPLY_TESTS}::test_a_decision_the_server_cannot_read_ends_the_run_and_the_sites_that_accepted_give_"
            "their_charge_back",)),
    Mutant("reply-site-catalogue-keys-negative-kept", "dpfed_core/deployment/client_app.py", "_check_catalogue_keys",
           "np.any(k < 0)", "False",
           ("tests/test_deployment_apps.py::test_broadcast_catalogue_keys_that_are_no_distinct_bucket_numbers_are_"
            "refused",)),
    Mutant("reply-site-catalogue-keys-off-by-one", "dpfed_core/deployment/client_app.py", "_check_catalogue_keys",
           "np.any(k >= n)", "np.any(k > n)",
           ("tests/test_deployment_apps.py::test_broadcast_catalogue_keys_that_are_no_distinct_bucket_numbers_are_"
            "refused",)),
    Mutant("reply-site-share-finiteness-unchecked", "dpfed_core/deployment/client_app.py", "_secure_share",
           "not np.all(np.isfinite(values))", "False",
           ("tests/test_deployment_apps.py::test_a_share_with_entries_that_are_not_finite_is_refused_not_quantised",)),
    Mutant("reply-recommend-list-length-zero-kept", "dpfed_core/federation/protocol.py", "check_list_length",
           "n < 1", "n < 0",
           ("tests/test_protocol.py::test_a_recommendation_list_length_that_is_no_whole_number_above_0_is_one_error_"
            "naming_n",
            "tests/test_dashboard_engine.py::test_a_top_n_below_1_is_one_error_naming_the_control_not_a_list_cut_from_"
            "its_end")),
    Mutant("reply-recommend-list-length-fraction-kept", "dpfed_core/federation/protocol.py", "check_list_length",
           "isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1", "n < 1",
           ("tests/test_protocol.py::test_a_recommendation_list_length_that_is_no_whole_number_above_0_is_one_error_"
            "naming_n",)),
    # what users read is true: the composed-ε chart, the ROC target, the message log, the plan's stage names,
    # the ε a method starts at, a parameter a method would ignore, the EM stopping rule its docstring states
    Mutant("read-xin-em-change-relative-to-the-new-rows", XIN_PY, "fit_em",
           "np.linalg.norm(C - prev) / max(np.linalg.norm(prev), 1e-300)",
           "np.linalg.norm(C - prev) / max(np.linalg.norm(C), 1e-300)", (READ_EM_STOP,)),
    Mutant("read-xin-em-stops-at-an-equal-change", XIN_PY, "fit_em", "change < tol", "change <= tol",
           (READ_EM_STOP,)),
    Mutant("read-xin-model-download-counted-once-per-entity", XIN_PY, "_make_fit.fit",
           "int(cols.sum()) * dataset.n_items * 8", "int(cols.max()) * dataset.n_items * 8", (READ_XIN_DOWNLOADS,)),
    Mutant("read-xin-download-counts-v-without-mu", XIN_PY, "XinJaakkola._stream",
           "self.downloaded_[users] = 1 + V.shape[1]", "self.downloaded_[users] = V.shape[1]",
           (READ_XIN_DOWNLOADS,)),
    Mutant("read-roc-unknown-target-drawn-as-the-first", RFIGURES, "audit_roc_figure", "not found", "False",
           (READ_ROC_TARGET,)),
    Mutant("read-composed-bars-unbounded-entity-left-out", PLOTS, "privacy_composed_bars", "unbounded.any()",
           "False", (READ_INF_BARS,)),
    Mutant("read-composed-bars-infinity-below-the-request-line", PLOTS, "privacy_composed_bars",
           "(*eps[fin], requested, coalition)", "tuple(eps[fin])", (READ_INF_BARS,)),
    Mutant("read-composed-bars-unbounded-entity-moved-last", PLOTS, "privacy_composed_bars", "list(names)",
           "list(names[fin]) + list(names[unbounded])", (READ_INF_BARS,)),
    Mutant("read-with-method-dp-method-at-one-after-no-epsilon", EVAL_DEFAULTS, "with_method",
           "_epsilon(measured['epsilon']) if measured is not None else 1.0", "1.0", (READ_WITH_METHOD,)),
    Mutant("read-with-method-infinity-passed-on", EVAL_DEFAULTS, "with_method",
           "METHODS[base.method].uses_epsilon and base.epsilon is not None and math.isfinite(float(base.epsilon))",
           "METHODS[base.method].uses_epsilon", (READ_WITH_METHOD,)),
    Mutant("read-fri-averages-ignore-parameters-silently", SPECS, MODULE,
           "Reads('computes exact averages of the ratings and reads none of its parameters')",
           "Reads('computes exact averages of the ratings and reads none of its parameters', "
           "tuple(p.name for p in FRIEDMAN_PARAMETERS))", (READ_FRI_IGNORED,)),
    Mutant("read-fri-solver-ignored-silently", SPECS, MODULE,
           "_SGD = ('factors', 'lam', 'iterations', 'lr', 'batch_size')",
           "_SGD = ('factors', 'lam', 'iterations', 'lr', 'batch_size', 'solver')", (READ_FRI_IGNORED,)),
    Mutant("read-fri-default-value-refused", SPECS, "check_parameters_used",
           "key in reads.always or value == defaults[key]", "key in reads.always", (READ_FRI_IGNORED,)),
    Mutant("read-fri-pals-skips-the-parameter-check", SPECS, "_check_pals", "check_parameters_used(config)", "None",
           (READ_FRI_IGNORED,)),
    Mutant("read-plan-lsh-search-named-as-the-partitions", DPP, "DPPrototypes.stage_names",
           "self.candidates == 'lsh' and k > 1", "False", (READ_PLAN_STAGES,)),
    Mutant("read-plan-stages-named-by-their-plan-keys", UI_CATALOGUE, "budget_plans", "obj.stage_names(k).get(s, s)",
           "s", (READ_PLAN_STAGES,)),
    Mutant("read-report-counts-logged-rows-not-copies", RSECTIONS, "_messages", "sum(_copies(mm) for mm in msgs)",
           "len(msgs)", (READ_COPIES,)),
    Mutant("read-dashboard-message-copies-unread", UI_TABLES, "messages_table",
           "df['copies'] = df['copies'].fillna(1).astype(int)", "df['copies'] = 1", (READ_COPIES,)),
    Mutant("read-xin-private-releases-one-message-per-entity", XIN_PY, "_make_fit.fit", "Message(2, name, SERVER)",
           "1", (READ_COPIES,), arg="copies"),
    Mutant("read-fcf-downloads-one-message-per-entity", FCF_PY, "_fit_fcf.on_round", "Message(rnd, SERVER, name)",
           "1", (READ_FCF_COPIES,), arg="copies"),
    Mutant("read-broadcast-said-in-the-first-round-the-server-sent", UI_TABLES, "broadcast_words", "max(rounds)",
           "min(rounds)", (READ_BROADCAST,)),
    Mutant("read-broadcast-said-for-a-curator-that-kept-the-model", UI_TABLES, "broadcast_words", "not rounds",
           "False", (READ_BROADCAST,)),
    Mutant("read-fri-baseline-said-to-protect-one-rating", FRIEDMAN, "_make_fit.fit", "_notes(config, private)",
           "_notes(config)", (READ_FRI_BASELINE_NOTE,)),
    # the account's name: the content key under the store's secret, renamed once in an older store
    Mutant("keyed-account-named-by-its-content-key", ODO, "BudgetOdometer._named",
           "keyed_key(_NO_SECRET if secret is None else secret, dataset_key(dataset))", "dataset_key(dataset)",
           (KEYED_NOWHERE, KEYED_APART)),
    Mutant("keyed-cap-set-on-the-content-keys-account", ODO, "BudgetOdometer.set_cap",
           "self._named(secret, dataset)", "dataset_key(dataset)", (KEYED_RENAMED,)),
    Mutant("keyed-rename-only-the-key-columns", STORE, "Store._name_accounts_by_key", 'str(c["type"]).upper() == "TEXT"',
           'c["name"] in ("key", "dataset_key", "alias_of")', (KEYED_RENAMED,)),
    Mutant("keyed-rename-with-a-foreign-key", STORE, "Store._name_accounts_by_key",
           "secret is not None and row is not None and secret_id(secret) != row[0]", "False", (KEYED_FOREIGN,)),
    Mutant("keyed-rename-with-a-new-key-over-the-stores-own", STORE, "Store._name_accounts_by_key",
           "secret = read_secret(path)", "secret = None", (KEYED_RENAMED,)),
    Mutant("keyed-rename-checks-references-row-by-row", STORE, "Store._name_accounts_by_key",
           'con.execute("PRAGMA defer_foreign_keys = ON")', "None", (KEYED_RENAMED,)),
    Mutant("keyed-rename-leaves-no-key-for-a-store-without-one", STORE, "Store._name_accounts_by_key",
           "secret = create_secret(path)", "secret = bytes(32)", (KEYED_NO_KEY,)),
    Mutant("keyed-older-read-only-store-finds-no-account", ODO, "BudgetOdometer._key_of",
           "self.store.unkeyed_names and self._known(dataset_key(dataset))", "False", (KEYED_READ_ONLY,)),
    Mutant("keyed-report-compares-names-of-two-namings", REPORT_PY, "same_data", "keys[0][:3] == keys[1][:3]", "True",
           (KEYED_REPORT,)),
    Mutant("keyed-sweep-document-keeps-no-data-name", SERVICE, "execute_sweep", "doc = compute(key)",
           "doc = compute()", (KEYED_NOWHERE,)),
    Mutant("keyed-resume-check-creates-the-store", SERVICE, "sweep_data_key",
           "not isinstance(store, Store) and not resolve_store_path(store).exists()", "False", (KEYED_RESUME,)),
    Mutant("keyed-resume-by-name-and-size-only", EXPERIMENTS, "_resumable_runs",
           'isinstance(old_key, str) and old_key.startswith("dk-") and new_key is not None', "False",
           (KEYED_RESUME,)),
    # the deployed server's decision step (every way it stops before any share goes through one function)
    # and the range of a SecAgg+ masked vector's entries
    Mutant("dshare-stopped-decisions-never-withdrawn", SERVER, "_Run.stop_before_any_share",
           "self.withdraw(accepted)", "''", (UNDECIDED, DSHARE_ONE_ENTITY)),
    Mutant("dshare-one-entity-twice-needs-three", SERVER, "_Run.misplaced", "len(ns) > 1", "len(ns) > 2",
           (DSHARE_ONE_ENTITY, DSHARE_ONE_ENTITY_RUN)),
    Mutant("dshare-decision-read-without-its-key", SERVER, "decision_of",
           "reply.has_error() or 'meta' not in reply.content.keys() or 'decision' not in reply.content['meta'].keys()",
           "reply.has_error() or 'meta' not in reply.content.keys()", (DSHARE_NO_DECISION_KEY,)),
    Mutant("dshare-undecided-site-told-to-withdraw", SERVER, "_Run.stop_before_any_share",
           "decision_of(r) == 'accepted'", "decision_of(r) != 'refused'", (DSHARE_NO_DECISION_KEY,)),
    Mutant("dshare-masked-entry-at-the-modulus-kept", SERVER, "check_masked", "p.max() < modulus",
           "p.max() <= modulus", (DSHARE_RANGE, f"{DSHARE_RANGE_RUN}[masked-modulus]")),
    Mutant("dshare-masked-negative-entry-kept", SERVER, "check_masked", DSHARE_IN_RANGE,
           "p.size == 0 or p.max() < modulus", (DSHARE_RANGE, f"{DSHARE_RANGE_RUN}[masked-negative]")),
    Mutant("dshare-masked-fraction-kept", SERVER, "check_masked", "np.issubdtype(p.dtype, np.integer)",
           "np.issubdtype(p.dtype, np.number)", (DSHARE_RANGE, f"{DSHARE_RANGE_RUN}[masked-float]")),
    Mutant("dshare-masked-range-is-the-quantisation-range", SERVER, "_SecureSum.__call__._LoggingGrid.send_and_receive",
           "check_masked(site, f'masked share ({label})', r, length, modulus)", "target",
           (f"{DSHARE_RANGE_RUN}[masked-negative]", DSHARE_DUMP), arg=4),
    # a read of the store never gives it its key; a store whose key is gone names no account and makes no new key
    Mutant("sread-show-creates-the-key", ODO, "BudgetOdometer._key_of", "self._secret(create=False)",
           "self._secret(create=True)", (SREAD_UNCHANGED,)),
    Mutant("sread-knows-creates-the-key", ODO, "BudgetOdometer.knows", "self.account_key(dataset, create=False)",
           "self.account_key(dataset)", (SREAD_UNCHANGED,)),
    Mutant("sread-dashboard-owner-key-creates-the-key", UI_HISTORY, "owner_key",
           "BudgetOdometer(Store(None)).account_key(dataset, create=False)",
           "BudgetOdometer(Store(None)).account_key(dataset)", (SREAD_UNCHANGED,)),
    Mutant("sread-resume-check-creates-the-key", SERVICE, "sweep_data_key", "_open_account(dataset, store, create=False)",
           "_open_account(dataset, store)", (SREAD_UNCHANGED,)),
    Mutant("sread-read-records-the-key-id", ODO, "BudgetOdometer._secret",
           "recorded is None and create and not self.store.readonly", "recorded is None and not self.store.readonly",
           (SREAD_ENV_KEY,)),
    Mutant("sread-lost-key-recreated-by-a-charge", ODO, "BudgetOdometer._secret",
           "recorded is not None or n_keyed or n_named", "ORIG and not create", (SREAD_LOST,)),
    Mutant("sread-accounts-without-key-id-get-a-new-key", ODO, "BudgetOdometer._secret",
           "recorded is not None or n_keyed or n_named", "recorded is not None or n_keyed", (SREAD_NO_KEY_ID,)),
    Mutant("sread-lost-key-refusal-names-the-store", ODO, "BudgetOdometer._secret", "path", "self.path",
           (SREAD_LOST,), nth=3),  # nth in ast.walk's order: the path in the missing key's refusal
    Mutant("sread-early-name-charged", ODO, "BudgetOdometer._charged_key",
           "key is None or self.names_no_account(dataset, key)", "key is None", (SREAD_EARLY,)),
    Mutant("sread-early-name-filed-in-the-history", UI_HISTORY, "save",
           "odo.filing_key(dataset, key)", "key", (SREAD_EARLY,)),
    Mutant("sread-session-keeps-the-early-name", UI_WIDGETS, "owner_key", "not BudgetOdometer.names_no_account(ds, key)",
           "True", (f"{WIDT}::test_the_owner_key_read_before_the_store_has_a_key_is_named_again_after_the_first_charge",)),
    Mutant("sread-register-reads-the-key-twice", ODO, "BudgetOdometer.register", "self._charged_key(key, secret, dataset)",
           "self._charged_key(key, self._secret(create=True), dataset)", (SREAD_ONCE,)),
    Mutant("unread-fri-isgd-alpha-read-when-bounded", SPECS, MODULE,
           "('variant', 'unbounded', 'drops no noisy rating unless variant is unbounded', ('alpha',))",
           "('variant', 'bounded', 'drops no noisy rating unless variant is unbounded', ('alpha',))",
           (f"{UNREAD_AGREE}[friedman-isgd]", f"{UNREAD_AGREE}[friedman-isgd-variant]")),
    Mutant("unread-fri-pals-reads-the-sgd-step", SPECS, MODULE,
           "_PRIVATE_GE + ('factors', 'lam', 'iterations', 'B', 'p_max', 'q_max')",
           "_PRIVATE_GE + _SGD + ('B', 'p_max', 'q_max')", (f"{UNREAD_AGREE}[friedman-pals]",)),
    Mutant("unread-fri-ge-mf-clamps-by-b-always", SPECS, MODULE,
           "('solver', 'private_preprocessing', 'factors', 'lam', 'iterations')",
           "('solver', 'private_preprocessing', 'factors', 'lam', 'iterations', 'B')", (f"{UNREAD_AGREE}[ge-mf]",)),
    Mutant("unread-fri-ge-mf-noise-settings-read-with-private-preprocessing", SPECS, MODULE,
           "('beta_m', 'beta_u', 'r_min', 'r_max', 'B')", "_PRIVATE_GE + ('B',)",
           (f"{UNREAD_AGREE}[ge-mf-private_preprocessing]",)),
    Mutant("unread-fri-ge-reads-the-mf-parameters", SPECS, MODULE,
           "Reads('releases private global effects only and fits no factors', _PRIVATE_GE)", "_PRIVATE_GE + _SGD",
           (f"{UNREAD_AGREE}[friedman-ge]",), arg=1),
    Mutant("unread-fri-psgd-error-clamp-dropped", SPECS, MODULE,
           "_PRIVATE_GE + _SGD + ('B', 'p_max', 'q_max', 'e_max')", "_PRIVATE_GE + _SGD + ('B', 'p_max', 'q_max')",
           (f"{UNREAD_AGREE}[friedman-psgd]",)),
    Mutant("unread-fri-ge-mf-sgd-settings-read-by-als", SPECS, MODULE,
           "('solver', 'sgd', 'fits by ALS unless solver is sgd', ('lr', 'batch_size'))",
           "('solver', 'als', 'fits by ALS unless solver is sgd', ('lr', 'batch_size'))",
           (f"{UNREAD_AGREE}[ge-mf]", f"{UNREAD_AGREE}[ge-mf-solver]")),
    Mutant("unread-fcf-adam-settings-read-by-gradient-steps", SPECS, MODULE,
           "('optimizer', 'adam', 'takes plain gradient steps unless optimizer is adam', "
           "('beta1', 'beta2', 'adam_eps', 'adam_bias', 'reset_state_each_epoch'))",
           "('optimizer', 'gd', 'takes plain gradient steps unless optimizer is adam', "
           "('beta1', 'beta2', 'adam_eps', 'adam_bias', 'reset_state_each_epoch'))",
           (f"{UNREAD_AGREE}[fcf]", f"{UNREAD_AGREE}[fcf-optimizer]")),
    Mutant("unread-xin-full-reads-the-public-settings", SPECS, MODULE,
           "Reads(\"fits trace-norm EM on every user's ratings: no user is public and none releases a vector\", _EM)",
           "_EM + _PUBLIC", (f"{UNREAD_AGREE}[xin-full]",), arg=1),
    Mutant("unread-xin-pmc-reads-the-pmd-search", SPECS, MODULE, "_EM + _PUBLIC + ('batch', 'private_weight')",
           "_EM + _PUBLIC + ('batch', 'private_weight', 'pmd_sweeps', 'pmd_tries')", (f"{UNREAD_AGREE}[xin-pmc]",)),
    Mutant("unread-xin-public-fraction-read-beside-n-public", SPECS, MODULE,
           "_PUBLIC = ('n_public', 'public_selection')",
           "_PUBLIC = ('n_public', 'public_selection', 'public_fraction')", (f"{UNREAD_AGREE}[xin-public-n_public]",)),
    Mutant("unread-check-friedman-defaults-for-every-system", SPECS, "check_parameters_used",
           "{p.name: p.default for p in declared}", "{p.name: p.default for p in FRIEDMAN_PARAMETERS}",
           (f"{UNREAD_AGREE}[fcf]",)),
    Mutant("unread-check-condition-read-from-the-given-values-only", SPECS, "check_parameters_used",
           "setting[name] == wanted", "given.get(name) == wanted", (f"{UNREAD_AGREE}[fcf]",)),
    Mutant("unread-check-fix-always-sets-the-condition", SPECS, "check_parameters_used",
           "f'drop {name}' if wanted is None else f'set {name}={_as_given(wanted)}'",
           "f'set {name}={_as_given(wanted)}'", (f"{UNREAD_SAID}[xin-public]",)),
    Mutant("unread-check-values-in-python-spelling", SPECS, "_as_given",
           "'true' if value is True else 'false' if value is False else f'{value:g}' if isinstance(value, float) "
           "else str(value)", "str(value)", (f"{UNREAD_SAID}[ge-mf-beta_u]",)),
    Mutant("unread-xin-registered-without-the-check", SPECS, "register",
           "MethodSpec(name, _lazy('xin', '_make_fit', mech), label, model, desc)", "None",
           (f"{UNREAD_SAID}[xin-pmc]",), arg="check"),
    Mutant("unread-fcf-registered-without-the-check", SPECS, "register", "MethodSpec('fcf', _lazy('fcf', '_fit_fcf'))",
           "None", (f"{UNREAD_SAID}[fcf]",), arg="check"),
    Mutant("unread-popularity-evidence-read-without-the-blend", SPECS, MODULE,
           "('local_blend', True, 'ranks every user by the plain DP popularity list unless local_blend is on', "
           "('holdout_evidence',))",
           "('local_blend', False, 'ranks every user by the plain DP popularity list unless local_blend is on', "
           "('holdout_evidence',))", (UNREAD_POPULARITY,)),
    Mutant("unread-check-skipped-for-federated-methods", SERVICE, "_check_method", "check_parameters_used(config)",
           "None", (UNREAD_POPULARITY,)),
    Mutant("unread-als-round-2-settings-read-without-the-blend", SPECS, MODULE,
           "('local_blend', True, 'fits every user on the broadcast factors alone unless local_blend is on', "
           "('holdout_evidence', 'round2_default'))",
           "('local_blend', False, 'fits every user on the broadcast factors alone unless local_blend is on', "
           "('holdout_evidence', 'round2_default'))", (f"{UNREAD_ROUND2}[dp-als-evidence]",)),
    Mutant("unread-cooccurrence-default-read-without-the-blend", SPECS, MODULE,
           "Reads('releases the DP co-occurrence', ('pop_share', 'max_items', 'local_blend', 'holdout_evidence'))",
           "Reads('releases the DP co-occurrence', ('pop_share', 'max_items', 'local_blend', 'holdout_evidence', "
           "'round2_default'))", (f"{UNREAD_ROUND2}[dp-cooccurrence-default]",)),
    Mutant("unread-prototypes-lsh-settings-read-by-the-partition", SPECS, MODULE,
           "('candidates', 'lsh', 'finds its candidates by the private partition unless candidates is lsh', "
           "('lsh_depth', 'lsh_node_factor', 'lsh_node_cap'))",
           "('candidates', 'partition', 'finds its candidates by the private partition unless candidates is lsh', "
           "('lsh_depth', 'lsh_node_factor', 'lsh_node_cap'))", (f"{UNREAD_LSH}[dp-gaussian]",)),
    # the calibrations, checked against Δ/ε and a profile written apart, on both sides of ε = 1 and Δ = 1
    Mutant("mech-laplace-scale-times-epsilon", MECH, "laplace_scale", "sensitivity / epsilon", "sensitivity * epsilon",
           (f"{MECHT}::test_mech_laplace_scale_meets_epsilon_by_opendp_map",)),
    Mutant("mech-gaussian-profile-times-sensitivity", MECH, "_gauss_delta", "epsilon * sigma / sensitivity",
           "epsilon * sigma * sensitivity",
           (f"{MECHT}::test_mech_analytic_gaussian_sigma_is_the_smallest_sigma_of_the_profile_written_apart",)),
    # basic composition's δ/2: a sweep composed by PLD takes only what every other release leaves
    Mutant("acc-pld-room-ignores-other-deltas", ACC, "compose_releases",
           "sum((e.delta for e in singles)) + sum((m.delta for b in batches.values() if len(pld_points(b)) <= 1 "
           "for m in b))",
           "sum((e.delta for e in singles)) - sum((m.delta for b in batches.values() if len(pld_points(b)) <= 1 "
           "for m in b))",
           (f"{ACCT}::test_a_sweep_composed_by_pld_takes_only_the_delta_the_other_releases_leave",)),
    Mutant("acc-one-point-sweep-delta-left-out", ACC, "compose_releases", "len(pld_points(b)) <= 1",
           "len(pld_points(b)) < 1",
           (f"{ACCT}::test_a_sweep_composed_by_pld_takes_only_the_delta_the_other_releases_leave",)),
    Mutant("acc-one-point-sweep-given-the-pld-share", ACC, "compose_releases", "len(gauss) > 1", "len(gauss) >= 1",
           (f"{ACCT}::test_a_sweep_composed_by_pld_takes_only_the_delta_the_other_releases_leave",)),
    Mutant("acc-basic-delta-exceeded-read-backwards", ACC, "basic_delta_exceeded",
           "not basic_delta_within(comp.basic_delta, delta)", "basic_delta_within(comp.basic_delta, delta)",
           (f"{ACCT}::test_a_sweep_composed_by_pld_takes_only_the_delta_the_other_releases_leave",)),
    Mutant("acc-gaussian-row-sensitivity-read-as-missing", ACC, "ledger_rho", "get('sensitivity') is not None",
           "get('sensitivity') is None",
           (f"{ACCT}::test_a_gaussian_row_without_its_own_rho_is_charged_from_its_sigma_and_sensitivity",)),
    Mutant("acc-zero-sensitivity-gaussian-row-left-without-rho", ACC, "ledger_rho", "sens >= 0", "sens > 0",
           (f"{ACCT}::test_a_gaussian_row_without_its_own_rho_is_charged_from_its_sigma_and_sensitivity",)),
    # the catalogue selection's public parameters at their bounds
    Mutant("cat-selection-at-infinite-epsilon", CAT, "selection_threshold", "math.isfinite(epsilon) and epsilon > 0",
           "math.isfinite(epsilon) or epsilon > 0", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    Mutant("cat-selection-at-zero-epsilon", CAT, "selection_threshold", "epsilon > 0", "epsilon >= 0", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    Mutant("cat-secure-sum-at-infinite-rho", CAT, "_secure_sigma", "math.isfinite(rho) and rho > 0",
           "math.isfinite(rho) or rho > 0", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    Mutant("cat-secure-sum-at-zero-rho", CAT, "_secure_sigma", "rho > 0", "rho >= 0", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    Mutant("cat-one-item-per-user-refused", CAT, "secure_catalogue_share", "c < 1", "c <= 1", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    Mutant("cat-two-buckets-refused", CAT, "_check_buckets", "b < 2", "b <= 2", (f"{SCAT}::test_the_selections_public_parameters_are_refused_at_their_bounds_and_accepted_inside",)),
    # the History page's reads are reads: a read-only store reopens results, a missing store stays missing
    Mutant("hread-load-opens-a-write-transaction", UI_HISTORY, "load", "store.read()", "store.write()",
           (f"{HREAD_T}::test_a_stored_run_reopens_with_its_factors_from_a_store_this_process_cannot_write",)),
    Mutant("hread-load-assumes-the-arrays-table", UI_HISTORY, "load",
           "con.execute('SELECT arrays FROM dashboard_arrays WHERE history_id = ?', (int(entry_id),)).fetchone() "
           "if _kept_arrays(con) else None",
           "con.execute('SELECT arrays FROM dashboard_arrays WHERE history_id = ?', (int(entry_id),)).fetchone()",
           (f"{HREAD_T}::test_a_run_kept_without_factors_reopens_from_its_document_on_a_read_only_store_with_no_arrays_table",)),
    Mutant("hread-owner-key-opens-a-missing-store", UI_HISTORY, "owner_key", "store_missing()", "False",
           (f"{HREAD_T}::test_the_dashboards_reads_of_a_store_that_does_not_exist_yet_make_no_store_and_no_folder",)),
    Mutant("hread-list-opens-a-missing-store", UI_HISTORY, "list_entries", "store_missing()", "False",
           (f"{HREAD_T}::test_the_dashboards_reads_of_a_store_that_does_not_exist_yet_make_no_store_and_no_folder",)),
    Mutant("hread-budget-line-opens-a-missing-store", UI_HISTORY, "reading_store", "not store_missing()", "True",
           (f"{HREAD_T}::test_the_dashboards_reads_of_a_store_that_does_not_exist_yet_make_no_store_and_no_folder",)),
    Mutant("hread-deleted-store-read-as-a-first-start", UI_HISTORY, "store_missing",
           "path.exists() or path.is_symlink() or own_key_left(path) is not None", "path.exists() or path.is_symlink()",
           (f"{HREAD_T}::test_a_store_deleted_beside_its_key_is_refused_by_the_history_not_read_as_a_first_start",)),
    Mutant("hread-history-page-budget-opens-a-missing-store", HIST_PAGE, "_budget",
           "history.store_missing() and (not st.session_state.get('hist_make_store'))", "False",
           (f"{HREAD_T}::test_the_history_page_on_a_first_start_shows_nothing_stored_and_leaves_no_store",)),
    # every parameter a run names is one it reads: the registry's one check, the partition's settings
    # under the LSH coreset, and Friedman et al.'s fifth (MF) share where no private factorisation spends it
    Mutant("unread2-registry-fit-skips-the-parameter-check", REGISTRY, "_checked.checked",
           "check(config)", "None",
           (f"{UNREAD_FIT}[friedman-isgd]", f"{UNREAD_FIT}[fcf]", f"{UNREAD_FIT}[xin-pmc]",
            f"{UNREAD_FIT}[dp-prototypes]")),
    Mutant("unread2-parameter-check-never-added", SPECS, "register", "add_fit_check(_fit_check)", "None",
           (f"{UNREAD_FIT}[dp-gaussian]",)),
    Mutant("unread2-registry-keeps-the-fit-unchecked", REGISTRY, "register_method",
           "replace(spec, fit=_checked(spec.fit))", "spec", (f"{UNREAD_FIT}[dp-gaussian]",)),
    Mutant("unread2-empty-catalogue-answer-skips-the-check", CATRUN, "_nothing_learned",
           "specs.check_parameters_used(config)", "None",
           (f"{UNREAD2_T}::test_a_run_whose_dp_catalogue_keeps_no_item_refuses_an_unread_parameter_too",)),
    Mutant("unread2-lsh-reads-the-local-search-settings", SPECS, MODULE,
           "('projection_dim', 'n_grids', 'depth', 'max_candidates', 'search_steps', 'final_choice')",
           "('projection_dim', 'n_grids', 'depth', 'max_candidates')", (UNREAD2_PARTITION,)),
    Mutant("unread2-partition-settings-read-under-lsh", SPECS, MODULE,
           "('candidates', 'partition', 'grows an LSH tree over the unprojected rows, with no grid partition and "
           "no private local search, unless candidates is partition', ('projection_dim', 'n_grids', 'depth', "
           "'max_candidates', 'search_steps', 'final_choice'))",
           "('candidates', 'lsh', 'grows an LSH tree over the unprojected rows, with no grid partition and "
           "no private local search, unless candidates is partition', ('projection_dim', 'n_grids', 'depth', "
           "'max_candidates', 'search_steps', 'final_choice'))", (UNREAD2_PARTITION,)),
    Mutant("unread2-unspent-mf-share-accepted", FRIEDMAN, "FriedmanMF._validate",
           "self.algorithm not in ALGORITHMS and split[4] != 0", "False", (f"{UNREAD2_FIFTH}[als-True]",)),
    Mutant("unread2-ge-unspent-mf-share-accepted", FRIEDMAN, "FriedmanMF._validate",
           "self.algorithm not in ALGORITHMS and split[4] != 0", "self.algorithm == 'ge' and split[4] != 0",
           (f"{UNREAD2_FIFTH}[sgd-True]",)),
    Mutant("unread2-clean-mf-default-split-gives-the-mf-a-share", FRIEDMAN, "FriedmanMF._split",
           "SPLIT_MF if self.algorithm in ALGORITHMS else SPLIT_GE",
           "SPLIT_GE if self.algorithm == 'ge' else SPLIT_MF",
           (f"{FRIT}::test_private_preprocessing_gives_clean_mf_the_private_global_effects",)),
    Mutant("unread2-engine-accepts-an-unspent-mf-share", SPECS, "check_parameters_used",
           "config.method == 'friedman-ge' and split is not None and len(split) == 5 and split[4] != 0", "False",
           (f"{FRIT}::test_the_engine_refuses_an_mf_share_private_global_effects_would_leave_unspent",)),
    Mutant("unread2-cli-list-parameter-read-as-one-number", CLI_ARGS, "parse_params",
           "k.strip().replace('-', '_') in lists and ',' in vl", "False", (UNREAD2_CLI_LIST,)),
    Mutant("unread2-cli-list-parameters-not-named", CLI_ARGS, "run_config",
           "list_params([args.method])", "set()", (UNREAD2_CLI_LIST,)),
    Mutant("audit-cli-list-parameters-not-named", "dpfed_core/cli/audit_cmd.py", "cmd_audit",
           "list_params(args.methods)", "set()",
           ("tests/test_intake_lists.py::test_the_audit_reads_a_list_parameter_of_an_audited_method_as_written",)),
    Mutant("hread-refusal-words-wrapped-as-a-read-failure", "dpfed_core/ui/history.py", "read_failure",
           "isinstance(exc, DpfedError)", "False",
           ("tests/test_history_reads.py::test_the_history_page_names_what_failed_and_where_when_the_store_cannot_be_"
            "read",)),
    Mutant("fri-zero-share-of-infinite-epsilon-is-nan", "dpfed_core/methods/comparison/friedman.py", "_share",
           "share == 0", "False",
           ("tests/test_comparison_friedman.py::test_a_zero_share_is_refused_alike_at_a_finite_and_an_infinite_"
            "epsilon",)),
    Mutant("compared-method-handed-the-runs-dropouts", EXPERIMENTS, "unused_settings_dropped",
           "config.max_dropouts and not has_secure_sum(config)", "False",
           (COMPARED_SETTINGS,)),
    Mutant("compared-method-handed-every-setting-of-the-run", "dpfed_core/evaluation/defaults.py", "compared_config",
           "unused_settings_dropped(base.replace(method=method))", "base.replace(method=method)",
           (COMPARED_SETTINGS,)),
    Mutant("hread-delete-assumes-the-arrays-table", "dpfed_core/ui/history.py", "delete",
           "_kept_arrays(con)", "True", (HREAD_DELETE,)),
    Mutant("hread-delete-leaves-the-arrays", "dpfed_core/ui/history.py", "delete",
           "con.execute('DELETE FROM dashboard_arrays WHERE history_id = ?', (int(entry_id),))", "None",
           (HREAD_DELETE,)),
    Mutant("hread-another-owners-entry-owned", UI_HISTORY, "_owned", "d.get('dataset_key') == key", "True",
           (OTHER_OWNER_DELETE, HREAD_DELETE_UNREAD)),
    Mutant("hread-delete-unpacks-the-arrays", UI_HISTORY, "delete", "_owned(dataset, entry_id, key)",
           "_owned(dataset, entry_id, key) if load(dataset, entry_id, key) is not None else None",
           (HREAD_DELETE_UNREAD,)),
    Mutant("budget-reference-beside-a-simulation-listed-as-simulation-noise", BUDGET, "_plan",
           "bool(simulation) and bool(charges)", "bool(simulation)",
           ("tests/test_budget_releases_cells.py::test_a_reference_compared_in_a_simulation_reads_releases_nothing_"
            "as_in_production",)),
    Mutant("time-hint-sums-runs-that-share-the-sites-fits", COST_PY, "predict_each", "key in made", "False",
           (SHARED_FITS,)),
    Mutant("time-hint-shares-fits-across-seeds", COST_PY, "predict_each",
           "tuple((str(d.get(k)) for k in SHARED_FIT_SETTINGS))", "tuple((str(d.get(k)) for k in SHARED_FIT_SETTINGS "
           "if k != 'seed'))", (SHARED_FITS,)),
    Mutant("time-hint-a-reference-makes-the-sites-fits", COST_PY, "predict_each", "shared is not None", "True",
           (SHARED_FITS,), nth=0),
    Mutant("time-hint-shared-run-at-its-whole-share-in-every-stage", COST_PY, "after_shared_fits",
           "float(shared.get(stage, 1.0))", "float(shared['total'])", (SHARED_FITS,)),
    Mutant("time-hint-every-method-reads-the-sites-fits", COST_PY, "shares_fits",
           "float(shared.get('total', 1.0)) <= SHARED_FIT_GAIN", "True", (SHARED_FITS,)),
    Mutant("time-hint-shared-fraction-above-one", COST_PY, "shared_fractions", "min(after / alone, 1.0)",
           "after / alone", (SHARED_FITS,)),
    Mutant("time-hint-shared-fraction-of-the-stages-after-only", COST_PY, "shared_fractions",
           "alone > 0.01 * len(pts)", "True", (SHARED_FITS,)),
    Mutant("time-hint-clock-without-the-shared-fits", COST_PY, "clock_for_runs",
           "predict_each(shape, configs, path)",
           "[predict_run(sh, c, path) for sh, c in zip(_each(shape, configs), configs)]", (SHARED_FITS,)),
    Mutant("dindex-decisions-never-checked-for-their-places", SERVER, "_Run.site_decisions",
           "self.misplaced(in_order)", "''", (DSHARE_INDEX, DSHARE_INDEX_RUN)),
    Mutant("dindex-two-names-at-one-index-kept", SERVER, "_Run.misplaced", "len(names) > 1",
           "len(names) > 2", (DSHARE_INDEX, DSHARE_INDEX_RUN)),
    Mutant("dindex-index-past-the-last-entity-kept", SERVER, "_Run.misplaced", "0 <= idx < self.n_entities",
           "0 <= idx <= self.n_entities", (DSHARE_INDEX,)),
    Mutant("dindex-negative-index-kept", SERVER, "_Run.misplaced", "0 <= idx < self.n_entities",
           "idx < self.n_entities", (DSHARE_INDEX,)),
    Mutant("dindex-boolean-index-kept", SERVER, "_Run.misplaced", "isinstance(idx, bool)", "False",
           (DSHARE_INDEX,)),
    Mutant("dindex-refusing-sites-index-read", SERVER, "_Run.misplaced",
           "str(meta['decision']) != 'accepted'", "False", (DSHARE_INDEX, DSHARE_ONE_ENTITY)),
    Mutant("time-hint-measured-run-in-the-benchmark-machines-seconds", COST_PY, "predict_run",
           "{s: f * v for s, v in here.items()}", "here", (MACHINE_SCALED,)),
    Mutant("time-hint-modelled-run-in-the-benchmark-machines-seconds", COST_PY, "_predict",
           "factor * max(float(np.dot(coef[stage], _terms(stage, shape, config))), 0.0)",
           "max(float(np.dot(coef[stage], _terms(stage, shape, config))), 0.0)", (MACHINE_SCALED,)),
    Mutant("time-hint-noise-draws-in-the-benchmark-machines-seconds", COST_PY, "_with_production_noise",
           "factor * (a * coords * 1e-06 + b * float(shape['H']) + c0)",
           "a * coords * 1e-06 + b * float(shape['H']) + c0", (MACHINE_SCALED,)),
    Mutant("time-hint-flowers-overhead-in-the-benchmark-machines-seconds", COST_PY, "deployment_overhead",
           "f * np.polyfit(pts[:, 0], pts[:, 1], 1)", "np.polyfit(pts[:, 0], pts[:, 1], 1)", (MACHINE_SCALED,)),
    Mutant("time-hint-machine-ratio-inverted", COST_PY, "machine_factor", "reference_seconds() / theirs",
           "theirs / reference_seconds()", (MACHINE_SCALED,)),
    Mutant("time-hint-machine-ratio-unbounded", COST_PY, "machine_factor", "min(max(ratio, lo), hi)", "ratio",
           (MACHINE_SCALED,)),
    Mutant("time-hint-samplers-in-their-machines-microseconds", COST_PY, "us_per_coordinate",
           "float(np.median(vals)) * machine_factor(doc)", "float(np.median(vals))", (SAMPLERS_SCALED,)),
    Mutant("time-hint-reference-work-at-its-slowest-repeat", COST_PY, "time_reference_work",
           "min(best, time.process_time() - t0)",
           "max(0.0 if best == math.inf else best, time.process_time() - t0)", (REFERENCE_FASTEST,)),
    Mutant("time-hint-page-silent-on-its-scaling", UI_ENGINE, "estimate_line", "speed_note()", "''", (PAGE_SCALED,)),
    Mutant("time-hint-scaling-said-at-any-ratio", COST_PY, "speed_note", "f == 1.0", "False", (PAGE_SCALED,)),
    Mutant("time-hint-one-machines-own-variation-taken-for-another-machine", COST_PY, "machine_factor",
           "SAME_MACHINE_BAND[0] <= ratio <= SAME_MACHINE_BAND[1]", "False", (MACHINE_SCALED,)),
    # checks that refuse before anything is charged or written, and a reader that leaves its store as it is
    Mutant("systems-xin-pmd-scale-checked-only-after-the-charge", SERVICE, "_check_method",
           "spec.check_data is not None", "False", (f"{XINT}::{PMD_CHECKED_FIRST}",)),
    Mutant("intake-item-feature-beyond-the-models-range-accepted", INP, "read_item_features",
           "abs(v) > MAX_FEATURE_MAGNITUDE", "False", (f"{LISTST}::{FEATURE_TOO_LARGE}",)),
    Mutant("site-store-key-naming-a-folder-started-the-nodes", SITE, "SitePolicy.check_store_folder",
           "path.is_dir()", "False", (f"{SITET}::{STORE_IS_FOLDER}",)),
    Mutant("site-reader-writes-its-tables-into-a-coordinators-store", SITE, "SiteLog.__init__",
           "not create", "False", (f"{SITET}::{SITE_READ_COORDINATOR}",)),
    Mutant("site-store-key-naming-a-damaged-file-started-the-nodes", DEPLOYED, "_not_a_database",
           "return str(exc)", "return ''", (f"{SITET}::{STORE_DAMAGED}",)),
)


GAUSSIAN_SHARE = "self.gaussian_share()"
SHARE_AUDIT = f"{REL}::test_summable_release_moves_by_at_most_its_recorded_sensitivity"


def builtin_summable_methods() -> list[tuple[str, type, str]]:
    """``(name, class, module path)`` of every registered summable method defined in ``dpfed_core``
    (not the tests' example or a plug-in), by name."""
    import inspect

    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    import dpfed_core.federation  # noqa: F401  (registers the engine's methods)
    from dpfed_core.federation.summable import SUMMABLE_METHODS

    out = []
    for name, cls in sorted(SUMMABLE_METHODS.items()):
        path = Path(inspect.getsourcefile(cls)).resolve()
        if (REPO / "dpfed_core") in path.parents:
            out.append((name, cls, path.relative_to(REPO).as_posix()))
    return out


def summable_share_mutants() -> tuple[Mutant, ...]:
    """One mutant per call of ``self.gaussian_share`` in a built-in summable method's class: the L2
    sensitivity the call states halved (σ and the row's sensitivity with it), so the release the
    noise is added to moves by more than the row says. The release audit of that method
    (:data:`SHARE_AUDIT`, without secure aggregation) must kill it; it survives only when the method
    states a sensitivity more than twice what one user can move its release by — then tighten it."""
    out = []
    for name, cls, path in builtin_summable_methods():
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
        for fn in node.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            hits = _hits(fn, _parse(GAUSSIAN_SHARE))
            for i, (*_, call) in enumerate(hits):
                by_name = any(k.arg == "sensitivity" for k in call.keywords)
                arg = 1 if len(call.args) > 1 else ("sensitivity" if by_name else None)
                if arg is None:
                    continue
                suffix = f"-{i + 1}" if len(hits) > 1 else ""
                out.append(Mutant(f"{name}-{fn.name.strip('_')}-sensitivity-halved{suffix}", path,
                                  f"{cls.__name__}.{fn.name}", GAUSSIAN_SHARE, "ORIG / 2",
                                  (f"{SHARE_AUDIT}[{name}-none]",), arg=arg, nth=i))
    return tuple(out)


def covers(m: Mutant, cls: type, path: str) -> bool:
    """Whether mutant ``m`` edits the summable method ``cls`` (defined in ``path``): a function of its
    class, or a function of the module when the module defines that method alone."""
    if m.path != path:
        return False
    if m.where.split(".")[0] == cls.__name__:
        return True
    return [c for n, c, p in builtin_summable_methods() if p == path] == [cls]


MUTANTS = MUTANTS + summable_share_mutants()


def _copy_tree(dest: Path) -> None:
    # the samples (268 KB) are read by the budget tests; the app, its pages and its Streamlit settings
    # by the page tests (AppTest runs app.py), so a bug planted in a page's engine calls can be caught
    for part in ("dpfed_core", "tests", "sample_data", "pages", ".streamlit"):
        if part in ("dpfed_core", "tests") or (REPO / part).exists():  # a copy of the engine alone has no app
            shutil.copytree(REPO / part, dest / part,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache"))
    for f in ("pyproject.toml", "requirements.txt", "app.py"):  # the pins: part of the engine's fingerprint
        if (REPO / f).exists():
            shutil.copy2(REPO / f, dest / f)


#: A mutant's tests still running after this many seconds are stopped and run once more; still running
#: then, the mutant counts as killed: a bug that sends the code into an endless loop is caught (the slowest
#: mutant's tests take about a minute and a half), and it must not stall the whole run. The second run is
#: there because a forked child can, very rarely, hang where a fresh one does not.
MUTANT_TIMEOUT_S = 240
#: What :meth:`ForkServer.run` returns for tests stopped at their timeout.
TIMED_OUT = pytest_forkserver.TIMED_OUT
#: One thread per BLAS library in every child: the runner already runs one mutant per core.
_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _env(cwd: Path, write_bytecode: bool = False) -> dict[str, str]:
    return {"PYTHONDONTWRITEBYTECODE": "" if write_bytecode else "1", "PYTHONPATH": str(cwd),
            "DPFED_SHARED_DATA": os.environ.get("DPFED_SHARED_DATA", str(REPO.parent / "shared" / "data"))}


def _pytest_args(tests: tuple[str, ...]) -> list[str]:
    return ["-x", "-q", "-p", "no:cacheprovider", *tests]


class ForkServer:
    """Runs pytest on ``tests`` in a folder as ``python -m pytest`` would there, in a forked child of
    ``tests/pytest_forkserver.py``: an interpreter that has already imported the third-party
    libraries, so a mutant's run costs its tests rather than two seconds of imports. It imports
    nothing of the project before it forks. :meth:`run` returns pytest's exit code, or
    :data:`TIMED_OUT` when the tests ran past ``timeout`` seconds (then every process they started
    is stopped with them: the child runs in a session of its own); :attr:`failed` holds the ids of the
    tests that failed in the last run."""

    def __init__(self, logdir: Path) -> None:
        self._logdir = logdir
        self._proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "pytest_forkserver.py")],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **_ONE_THREAD))
        if json.loads(self._proc.stdout.readline() or "{}").get("ready") is not True:
            raise RuntimeError("the pytest fork server did not start")
        self._n = 0
        self.failed: list[str] = []

    def run(self, cwd: Path, tests: tuple[str, ...], show_failure: bool = False,
            timeout: float | None = None, write_bytecode: bool = False, args: tuple[str, ...] = ()) -> int:
        self._n += 1
        log = self._logdir / f"pytest-{os.getpid()}-{id(self)}-{self._n}.log"
        failed = log.with_suffix(".failed")
        job = {"cwd": str(cwd), "args": [*_pytest_args(tests), *args], "env": _env(cwd, write_bytecode),
               "timeout": timeout, "log": str(log), "failed": str(failed), "brief": not show_failure}
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline()
        if not answer:
            raise RuntimeError("the pytest fork server stopped")
        rc = json.loads(answer)["rc"]
        self.failed = json.loads(failed.read_text()) if failed.exists() else []
        if show_failure and rc != 0:
            print(log.read_text(errors="replace")[-6000:])
        log.unlink(missing_ok=True)
        failed.unlink(missing_ok=True)
        return rc

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait(timeout=60)


def _verdict(rc: int) -> str:
    return ("killed" if rc == 1 else "killed (timed out)" if rc == TIMED_OUT
            else "SURVIVED" if rc == 0 else f"ERROR (exit {rc})")


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` with its size and modification time, and every folder: what a run must leave
    as it found (a folder's time moves when the mutated file's compiled form is put back)."""
    out = {}
    for d, dirs, names in os.walk(root):
        out.update((os.path.relpath(os.path.join(d, n), root), (-1, -1)) for n in dirs)
        for n in names:
            st = os.stat(os.path.join(d, n))
            out[os.path.relpath(os.path.join(d, n), root)] = (st.st_size, st.st_mtime_ns)
    return out


def stale_mutants(mutants, root: Path) -> list[str]:
    """Why each mutant whose pattern is no longer found exactly once is stale (each module parsed once)."""
    trees: dict[str, ast.Module] = {}
    stale = []
    for m in mutants:
        if m.path not in trees:
            trees[m.path] = ast.parse((root / m.path).read_text())
        try:
            _locate(trees[m.path], m)
        except LookupError as exc:
            stale.append(str(exc))
    return stale


def run(mutants, jobs: int = 1) -> int:
    """Apply each mutant in a copy of the engine and run its tests, ``jobs`` mutants at a time (each
    worker with a fork server and a copy of its own); every mutant's line is printed as it ends. Then
    the baseline: every test that caught a mutant must pass on the unmutated copy (a test that fails
    there catches nothing)."""
    from concurrent.futures import ThreadPoolExecutor
    import compileall
    import threading

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpfed-mutants-") as tmp:
        base = Path(tmp) / "base"
        _copy_tree(base)
        stale = stale_mutants(mutants, base)
        if stale:
            print("STALE mutants (pattern not found exactly once): " + "; ".join(stale))
            return 1
        jobs = max(1, min(jobs, len(mutants)))
        local = threading.local()
        lock = threading.Lock()
        workers: list[tuple[ForkServer, Path]] = []

        def worker() -> tuple[ForkServer, Path]:
            """This thread's fork server and its copy of the engine (the same copy for each of its mutants,
            the mutated file put back after each)."""
            if not hasattr(local, "worker"):
                with lock:
                    work = Path(tmp) / f"work{len(workers)}"
                    local.worker = (ForkServer(Path(tmp)), work)
                    workers.append(local.worker)
                shutil.copytree(base, work)  # sources keep their times, so the compiled files hold
                local.files = _files(work)
            return local.worker

        def reset(work: Path) -> None:
            """The copy as it was, should a run have left a file in it or changed one."""
            if _files(work) != local.files:
                shutil.rmtree(work)
                shutil.copytree(base, work)
                local.files = _files(work)

        pool = ThreadPoolExecutor(max_workers=jobs)
        results: list[tuple[str, int, list[str]]] = []
        try:
            t0 = time.perf_counter()
            # the engine compiled, and the tests rewritten by pytest, once for every copy below
            compileall.compile_dir(str(base), quiet=1)
            files = tuple(dict.fromkeys(t.split("::")[0] for m in mutants for t in m.tests))
            collect = ForkServer(Path(tmp))
            rc = collect.run(base, files, show_failure=True, write_bytecode=True, args=("--collect-only",))
            collect.close()
            if rc != 0:
                print(f"the targeted tests do not collect on the unmutated copy (exit {rc})")
                return 1
            print(f"prepared ({len(files)} test files) [{time.perf_counter() - t0:.0f} s]", flush=True)

            def one(m) -> tuple[str, int, list[str]]:
                server, work = worker()
                f = work / m.path
                f.write_text(apply_mutant(f.read_text(), m))
                for cached in (f.parent / "__pycache__").glob(f"{f.stem}.*.pyc"):
                    cached.unlink()
                t = time.perf_counter()
                rc = server.run(work, m.tests, timeout=MUTANT_TIMEOUT_S)
                if rc == TIMED_OUT:
                    rc = server.run(work, m.tests, timeout=MUTANT_TIMEOUT_S)
                failed = server.failed if rc == 1 and server.failed else list(m.tests)
                shutil.copy2(base / m.path, f)
                for cached in (base / m.path).parent.joinpath("__pycache__").glob(f"{f.stem}.*.pyc"):
                    shutil.copy2(cached, f.parent / "__pycache__" / cached.name)
                reset(work)
                with lock:
                    print(f"{m.name:34s} {_verdict(rc):10s} [{time.perf_counter() - t:.0f} s]", flush=True)
                return m.name, rc, failed

            results = list(pool.map(one, mutants))
            survivors = [name for name, rc, _ in results if rc not in (1, TIMED_OUT)]
            # the baseline: the tests that caught a mutant, run the same way on the unmutated copy
            t0 = time.perf_counter()
            caught = tuple(dict.fromkeys(t for _, rc, failed in results if rc in (1, TIMED_OUT) for t in failed))
            parts = [caught[i::jobs] for i in range(min(jobs, len(caught)))]  # never empty: that runs everything
            codes = list(pool.map(lambda part: worker()[0].run(base, part, show_failure=True), parts))
            base_rc = next((c for c in codes if c != 0), 0)
            print(f"baseline (unmutated, the {len(caught)} tests that caught a mutant): "
                  f"{'pass' if base_rc == 0 else f'FAIL (exit {base_rc}): their catches prove nothing'} "
                  f"[{time.perf_counter() - t0:.0f} s]", flush=True)
        finally:
            pool.shutdown()
            for s, _ in workers:
                s.close()
    print(f"{len(mutants) - len(survivors)}/{len(mutants)} mutants killed"
          + (f"; not killed: {', '.join(survivors)}" if survivors else "")
          + f" [{time.perf_counter() - start:.0f} s, {jobs} at a time]")
    return 1 if survivors or base_rc != 0 else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="mutants run at a time (default: one per core)")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34s} {m.path}")
        return 0
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.only and len(chosen) != len(args.only):
        print(f"unknown mutant(s): {sorted(set(args.only) - {m.name for m in MUTANTS})}")
        return 2
    return run(chosen, jobs=args.jobs)


if __name__ == "__main__":
    sys.exit(main())
