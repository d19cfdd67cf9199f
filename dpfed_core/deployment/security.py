"""TLS certificates and SuperNode authentication keys for a local deployment.

A local run makes its own throw-away certificate authority (CA), one server certificate for
127.0.0.1/localhost signed by it (the SuperLink's Fleet, Control and Runtime APIs and each
SuperNode's Runtime API serve it), and one P-256 key pair per SuperNode for Flower's node
authentication (the SuperLink accepts only the public keys registered with ``flwr supernode
register``). Everything is written to the run's private folder (mode 0700) and removed with it.
A real site gets its certificate from its own CA instead (docs/DEPLOYMENT.md); the flags are the same.

Curve: NIST P-256 (ECDSA with SHA-256; 128-bit security, TLS 1.3's default group) for the CA, the
certificate and the node keys. Every Fleet request is signed by its node and verified by the SuperLink,
and every ClientApp task opens a TLS connection to its node: with P-384 (verify ≈ 0.5 ms against
0.07 ms here) that was several CPU-seconds of a 30-node run. Flower's node authentication accepts any
NIST curve.

Uses the ``cryptography`` package, a dependency of Flower itself.
"""
from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TlsFiles:
    """Paths of the CA certificate, the server certificate and its key (PEM)."""

    ca: Path
    cert: Path
    key: Path


@dataclass(frozen=True)
class NodeKey:
    """A SuperNode's authentication key pair: OpenSSH private key, OpenSSH public key."""

    private: Path
    public: Path


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def make_tls(directory: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost"), days: int = 2) -> TlsFiles:
    """A CA and a server certificate for ``hosts`` (IP addresses and DNS names) in ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dpfed local deployment CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for h in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    files = TlsFiles(directory / "ca.crt", directory / "server.pem", directory / "server.key")
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_private(files.key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return files


def make_node_key(directory: Path, name: str) -> NodeKey:
    """One SuperNode's P-256 key pair in OpenSSH format (what ``--auth-supernode-private-key`` and
    ``flwr supernode register`` read)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    out = NodeKey(directory / f"{name}.key", directory / f"{name}.pub")
    _write_private(out.private, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                                  serialization.NoEncryption()))
    out.public.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                         serialization.PublicFormat.OpenSSH))
    return out


def load_public_key(path: Path) -> bytes:
    """A SuperNode public key (OpenSSH format, a NIST curve) as the Control API's RegisterNode
    takes it — the bytes ``flwr supernode register KEY`` sends."""
    from flwr.supercore.primitives.asymmetric import public_key_to_bytes
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = serialization.load_ssh_public_key(Path(path).read_bytes())
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise ValueError(f"{path} is not an EC public key")
    return public_key_to_bytes(key)
