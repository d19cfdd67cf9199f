"""What a deployment is given and says: ``--workdir`` keeps an existing folder's mode (the run's private
files go in a 0700 folder of their own), a plug-in that exits is named, an error quotes its log."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from dpfed_core.deployment.launcher import GuardedFolder


class _Folder(GuardedFolder):
    def __init__(self, workdir):
        self.guard, self.workdir, self.keep = None, workdir, True


def _mode(p) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_an_existing_workdir_keeps_its_mode_and_the_run_gets_a_private_folder_inside(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    f = _Folder(shared)
    f._open_dir()
    try:
        assert _mode(shared) == 0o755
        assert f.dir.parent == shared and f.dir.name.startswith("dpfed-run-") and _mode(f.dir) == 0o700
    finally:
        f._release_guard()


def test_a_new_workdir_is_made_private(tmp_path):
    new = tmp_path / "new" / "run"
    f = _Folder(new)
    f._open_dir()
    try:
        assert f.dir == new and _mode(new) == 0o700
    finally:
        f._release_guard()


def test_a_run_without_workdir_gets_a_private_folder():
    f = _Folder(None)
    f._open_dir()
    try:
        assert _mode(f.dir) == 0o700
    finally:
        f._release_guard()


def test_private_keys_are_the_owners_only_and_public_ones_readable(tmp_path):
    """The SuperLink's TLS key and each SuperNode's signing key are written 0600 (whoever reads them can
    pose as the coordinator or a site); certificates and public keys are not secrets."""
    import pytest

    pytest.importorskip("cryptography")
    from dpfed_core.deployment.security import make_node_key, make_tls

    tls = make_tls(tmp_path / "tls")
    node = make_node_key(tmp_path / "keys", "site-a")
    assert _mode(tls.key) == 0o600 and _mode(node.private) == 0o600
    assert _mode(node.public) & 0o044 and _mode(tls.ca) & 0o044


def test_the_server_certificate_names_both_local_hosts_is_no_ca_and_lasts_the_days_asked(tmp_path):
    """A SuperNode reaching the SuperLink as 127.0.0.1 or as localhost verifies the certificate against
    the run's CA; the certificate cannot sign others; it is valid for the run's days, not minutes."""
    import datetime
    import ipaddress

    import pytest

    pytest.importorskip("cryptography")
    from cryptography import x509

    from dpfed_core.deployment.security import make_tls

    tls = make_tls(tmp_path / "tls", days=2)
    cert = x509.load_pem_x509_certificate(tls.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    ca = x509.load_pem_x509_certificate(tls.ca.read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert cert.issuer == ca.subject
    lasts = cert.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(days=1, hours=23) < lasts <= datetime.timedelta(days=2)


def test_a_plug_in_that_exits_while_imported_is_named(tmp_path, monkeypatch):
    import pytest

    from dpfed_core.deployment.plugins import load_plugins
    from dpfed_core.errors import ConfigError

    (tmp_path / "exiting_plugin.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("DPFED_PLUGINS", raising=False)
    with pytest.raises(ConfigError, match=r"'exiting_plugin' called sys.exit\(0\)"):
        load_plugins(["exiting_plugin"])


def test_the_plug_ins_of_a_process_are_its_environments_then_the_flags_each_once_and_passed_on(tmp_path, monkeypatch):
    """A node imports only what its operator listed; the processes deploy-local starts import what it
    imported: the environment's list first, then --plugin, each once, blanks dropped, written back."""
    import os

    from dpfed_core.deployment.plugins import listed, load_plugins

    for name in ("plug_a", "plug_b", "plug_c"):
        (tmp_path / f"{name}.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("DPFED_PLUGINS", " plug_b, ,plug_a,plug_b,")
    assert listed(["plug_c", " plug_a ", "  "]) == ["plug_b", "plug_a", "plug_c"]
    assert load_plugins(["plug_c"]) == ["plug_b", "plug_a", "plug_c"]
    assert os.environ["DPFED_PLUGINS"] == "plug_b,plug_a,plug_c"
    monkeypatch.delenv("DPFED_PLUGINS")
    assert listed() == [] and load_plugins() == []
    assert "DPFED_PLUGINS" not in os.environ  # nothing listed: nothing set for the processes started


def test_a_message_records_the_shape_and_bytes_of_what_crossed_the_boundary():
    import json

    import numpy as np

    from dpfed_core.federation.messages import SERVER, array_message

    m = array_message(1, "north", SERVER, "3 prototypes", np.zeros((3, 40), dtype=np.float32))
    assert (m.round, m.sender, m.receiver, m.content) == (1, "north", "server", "3 prototypes")
    assert m.shape == (3, 40) and m.bytes == 3 * 40 * 4
    d = m.to_dict()
    assert d["shape"] == [3, 40] and json.loads(json.dumps(d)) == d


def test_an_error_quotes_the_log_it_points_to(tmp_path):
    from dpfed_core.deployment.launcher import see_log

    log = tmp_path / "supernode_000.log"
    log.write_text("starting\nModuleNotFoundError: No module named 'my_plugin'\n")
    text = see_log(log)
    assert str(log) in text and "No module named 'my_plugin'" in text
    assert see_log(tmp_path / "gone.log").startswith("see ")  # a removed log: the path alone


def test_the_coordinators_workdir_is_absolute_and_an_existing_one_keeps_its_mode(tmp_path, monkeypatch):
    """deploy-local's own folder under --workdir (shards, the policy, Flower's logs): a relative path is
    made absolute (Flower's processes start in other folders, where a relative log path names nothing), and an
    existing folder — perhaps the operator's home — keeps its mode, the run's files in a private one inside."""
    from dpfed_core.deployment.launcher import private_run_dir

    monkeypatch.chdir(tmp_path)
    made = private_run_dir("wd")
    assert made == tmp_path / "wd" and made.is_absolute() and _mode(made) == 0o700
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o755)
    inside = private_run_dir("home")
    assert _mode(home) == 0o755 and inside.parent == home and _mode(inside) == 0o700


def test_a_superlink_that_fails_at_start_up_says_no_node_drew(tmp_path):
    """Nothing ran anywhere: the error carries ledger_rows = 0, so the coordinator's reservation is given
    back rather than kept charged as failed."""
    import pytest

    from dpfed_core.deployment.launcher import _wait_port
    from dpfed_core.errors import DeploymentError

    class Exited:
        returncode = 1

        def poll(self):
            return 1

    with pytest.raises(DeploymentError) as err:
        _wait_port(1, 1.0, Exited(), tmp_path / "superlink.log")
    assert err.value.ledger_rows == 0


def test_a_port_range_is_bounded_ordered_and_inclusive_and_its_free_ports_are_distinct_and_unused():
    """--port-range LOW-HIGH: 1024 ≤ LOW ≤ HIGH ≤ 65535, both ends usable; a port in use is skipped, never
    handed out; too few free ports is one error saying how many the deployment needs."""
    import socket

    from dpfed_core.deployment.launcher import DeploymentError, free_ports, parse_port_range

    assert parse_port_range("1024-65535") == (1024, 65535)
    for bad in ("1023-2000", "2000-65536", "3000-2999"):
        with pytest.raises(DeploymentError, match=r"expected 1024 ≤ LOW ≤ HIGH ≤ 65535"):
            parse_port_range(bad)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        taken = busy.getsockname()[1]
        with socket.socket() as probe:  # a free port just above the busy one, if there is one
            try:
                probe.bind(("127.0.0.1", taken + 1))
                free_next = True
            except OSError:
                free_next = False
        if free_next:
            assert free_ports(1, (taken, taken + 1)) == [taken + 1]  # the last port of the range is used
        with pytest.raises(DeploymentError, match=r"--port-range \d+-\d+: 0 free port\(s\), the deployment needs 3 "
                                                  r"\(1 SuperLink \+ 2 SuperNodes\); widen the range"):
            free_ports(3, (taken, taken))
    got = free_ports(5)
    assert len(set(got)) == 5


def test_only_a_deployment_folder_whose_named_owner_is_gone_is_swept(tmp_path):
    """A private folder is removed at the next start only when its owner file names a process that no longer
    runs: a live owner's and a folder without an owner file (perhaps another program's live run) stay."""
    import subprocess
    import sys

    from dpfed_core.deployment.launcher import PRIVATE_PREFIX, sweep_stale

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    gone, live, unnamed = (tmp_path / f"{PRIVATE_PREFIX}{x}" for x in ("gone", "live", "unnamed"))
    for d in (gone, live, unnamed):
        d.mkdir()
    (gone / "owner").write_text(dead.stdout)
    (live / "owner").write_text(f"{os.getpid()}\n")
    assert sweep_stale(tmp_path) == [gone]
    assert not gone.exists() and live.exists() and unnamed.exists()


def test_a_deployment_folder_of_another_user_or_of_an_owner_we_may_not_signal_is_kept(tmp_path, monkeypatch):
    """Another user's folder is never swept, whatever its owner file says; and an owner process that exists
    but belongs to another user (signalling it is not permitted) is alive, so its folder stays."""
    import subprocess
    import sys

    from dpfed_core.deployment import launcher

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    folder = tmp_path / f"{launcher.PRIVATE_PREFIX}theirs"
    folder.mkdir()
    (folder / "owner").write_text(dead.stdout)
    me = os.getuid()
    monkeypatch.setattr(launcher.os, "getuid", lambda: me + 1)     # the folder is now another user's
    assert launcher.sweep_stale(tmp_path) == [] and folder.exists()
    monkeypatch.setattr(launcher.os, "getuid", lambda: me)

    def not_permitted(pid, sig):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(launcher.os, "kill", not_permitted)        # the owner runs under another user
    assert launcher.sweep_stale(tmp_path) == [] and folder.exists()
    monkeypatch.undo()
    assert launcher.sweep_stale(tmp_path) == [folder] and not folder.exists()


def _three_sites(n_declared: int | None = None):
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    X = sp.csr_matrix(np.random.default_rng(3).poisson(0.6, (30, 12)).astype(float))
    return FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 10), value_kind="counts", value_max=5,
                                       name="three sites", item_source="declared",
                                       **({} if n_declared is None else {"n_declared": n_declared}))


def test_a_sites_export_writes_its_own_shard_only_in_a_federation_listing_each_site_once(tmp_path):
    """A site exporting its own data (``only``) writes its shard alone, numbered by its place in the
    declared federation; a declared list naming a site twice would give two nodes one place: refused."""
    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.shards import load_shard, write_shards
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.experiments import make_split

    ds = _three_sites()
    split = make_split(ds, RunConfig(seed=0))
    paths = write_shards(ds, split, tmp_path / "b", declared=["Z", "C", "B", "A"], only=["B"])
    assert [p.name for p in paths] == ["entity_002.npz"] and sorted(os.listdir(tmp_path / "b")) == ["entity_002.npz"]
    shard = load_shard(paths[0])
    assert (shard.entity, shard.index, shard.n_entities) == ("B", 2, 4)
    with pytest.raises(ConfigError, match="--declared-entities"):
        write_shards(ds, split, tmp_path / "twice", declared=["A", "B", "B", "C"])
    assert not (tmp_path / "twice").exists() or not list((tmp_path / "twice").iterdir())


def test_a_shard_of_another_format_is_refused_and_its_declared_catalogue_read_back(tmp_path):
    """The node reads its declared catalogue's size from its own shard (never from the run); a shard of
    another format version is refused, naming the command that rewrites it."""
    import numpy as np

    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.shards import load_shard, write_shards
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.experiments import make_split

    ds = _three_sites(n_declared=8)
    path = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")[0]
    shard = load_shard(path)
    assert (shard.n_declared, shard.train.shape[1], shard.item_source) == (8, 12, "declared")
    with np.load(path, allow_pickle=False) as z:
        parts = {k: z[k] for k in z.files}
    parts["version"] = np.asarray(1)
    with open(path, "wb") as f:
        np.savez(f, **parts)
    with pytest.raises(ConfigError, match="format version 1, expected 2; rewrite it with .*write-shards"):
        load_shard(path)


def test_a_data_path_or_features_path_naming_a_folder_is_said_to_be_a_folder(tmp_path):
    """A SuperNode pointed at a folder is told that, with the node-config key that fixes it — not that
    the path does not exist, which it does."""
    from dpfed_core.deployment.shards import load_item_features, load_shard
    from dpfed_core.errors import ConfigError

    with pytest.raises(ConfigError, match=f"shard file {tmp_path} is a folder, not a shard file; fix the "
                                          "SuperNode's --node-config \"data-path='…'\""):
        load_shard(tmp_path)
    with pytest.raises(ConfigError, match=f"item features file {tmp_path} is a folder; fix the SuperNode's "
                                          "--node-config \"item-features='…'\""):
        load_item_features(tmp_path, 3)
    with pytest.raises(ConfigError, match="missing.npz does not exist; fix the SuperNode's --node-config"):
        load_shard(tmp_path / "missing.npz")


def test_write_shards_to_a_file_names_out_dir_before_reading_the_data(tmp_path, capsys):
    """--out-dir naming a file (or a path under one) is one error naming the flag, said before the data
    are loaded; a folder that does not exist yet is made."""
    from dpfed_core.cli.main import main

    afile = tmp_path / "afile"
    afile.write_text("keep")
    for out, said in ((afile, "is not a folder;"), (afile / "shards", f"(its folder {afile} is a file)")):
        assert main(["write-shards", "--data", "sample:clinic", "--out-dir", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.strip().count("\n") == 0 and err.startswith(f"error: --out-dir {out} ") and said in err, err
    assert afile.read_text() == "keep"
    assert main(["write-shards", "--data", "sample:clinic", "--out-dir", str(tmp_path / "new" / "shards")]) == 0
    assert len(list((tmp_path / "new" / "shards").glob("entity_*.npz"))) > 1


def test_the_runs_ca_signs_the_server_certificate_and_no_further_authority(tmp_path):
    """A node trusts what the run's CA signed: the server certificate verifies against the CA's key, and
    the CA signs end certificates only (path length 0: no authority made below it is trusted)."""
    pytest.importorskip("cryptography")
    from cryptography import x509

    from dpfed_core.deployment.security import make_tls

    tls = make_tls(tmp_path / "tls")
    ca = x509.load_pem_x509_certificate(tls.ca.read_bytes())
    cert = x509.load_pem_x509_certificate(tls.cert.read_bytes())
    cert.verify_directly_issued_by(ca)  # raises when another key signed it
    limits = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert limits.critical and limits.value.ca is True and limits.value.path_length == 0
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and not usage.key_encipherment


def test_a_node_key_other_than_a_nist_curve_key_is_refused(tmp_path):
    """The SuperLink registers NIST-curve node keys only: another kind of key is refused when read,
    not handed to Flower's registration."""
    pytest.importorskip("flwr")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    from dpfed_core.deployment.security import load_public_key, make_node_key

    assert len(load_public_key(make_node_key(tmp_path, "site-a").public)) > 0
    other = tmp_path / "other.pub"
    other.write_bytes(ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH))
    with pytest.raises(ValueError, match="is not an EC public key"):
        load_public_key(other)


def test_each_supernode_is_started_with_its_own_shard_policy_and_key_and_checks_the_superlinks_certificate(
        tmp_path, monkeypatch):
    """What deploy-local hands each process: the SuperLink serves TLS and accepts only registered node
    keys; node h gets shard h, policy h and key h (whose public half is registered), and verifies the
    SuperLink against the run's CA. Nothing is started: the processes' arguments are read."""
    from types import SimpleNamespace

    pytest.importorskip("cryptography")
    from dpfed_core.deployment import launcher

    spawned: list[tuple[str, list[str]]] = []
    registered: list = []

    class Zygote:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def spawn(self, role, argv, log, watch=True):
            spawned.append((role, list(argv)))
            return SimpleNamespace(poll=lambda: None)

    class Control:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def register(self, keys) -> None:
            registered.extend(keys)

    monkeypatch.setattr(launcher, "_Zygote", Zygote)
    monkeypatch.setattr(launcher, "_ForkedControl", Control)
    monkeypatch.setattr(launcher, "_wait_port", lambda *args: None)
    shards = [tmp_path / f"entity_{h:03d}.npz" for h in range(3)]
    policies = [tmp_path / f"site_{h}.toml" for h in range(3)]
    fed = launcher.LocalFederation(shards, tmp_path / "run", site_policy=policies,
                                   guard=SimpleNamespace(path=None))
    fed._open_dir()
    fed._start([20000, 20001, 20002, 20003], 1.0)

    def flags(argv: list[str]) -> list[str]:
        return argv[argv.index("--") + 1:]

    def value(argv: list[str], flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert [role for role, _ in spawned] == ["link", "node", "node", "node"]
    link = flags(spawned[0][1])
    assert "--insecure" not in link and "--enable-supernode-auth" in link
    assert value(link, "--ssl-certfile") == str(fed.tls.cert) and value(link, "--ssl-ca-certfile") == str(fed.tls.ca)
    keys = []
    for h, (_, argv) in enumerate(spawned[1:]):
        node = flags(argv)
        assert "--insecure" not in node and value(node, "--root-certificates") == str(fed.tls.ca)
        config = value(node, "--node-config")
        assert f"data-path='{shards[h].resolve()}'" in config and f"policy-path='{policies[h].resolve()}'" in config
        keys.append(Path(value(node, "--auth-supernode-private-key")))
    assert len(set(keys)) == 3 and registered == [k.with_suffix(".pub") for k in keys]
