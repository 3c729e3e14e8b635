"""Certificates for etcd on loopback, made on the spot.

A CA, a server certificate for 127.0.0.1 and localhost, and a client certificate:
``python -m deploy.local_cluster`` and the tests use them; a production cluster brings its own.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from deploy.etcd_server import TlsFiles


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.touch(mode=0o600)
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_tls_files(folder: Path) -> TlsFiles:
    """Write a CA, a server certificate (127.0.0.1, localhost) and a client certificate."""
    folder.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    valid = (now - dt.timedelta(minutes=5), now + dt.timedelta(days=30))
    ca_key = _key()
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("catalog local CA"))
        .issuer_name(_name("catalog local CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    paths: dict[str, Path] = {"ca": folder / "ca.pem"}
    paths["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    # etcd's HTTP gateway dials its own gRPC port with the server certificate as a client
    # certificate, so the server certificate serves both purposes.
    both = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    for role, usages in (("server", both), ("client", [ExtendedKeyUsageOID.CLIENT_AUTH])):
        key = _key()
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name(f"catalog local {role}"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(valid[0])
            .not_valid_after(valid[1])
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        paths[f"{role}_cert"] = folder / f"{role}.pem"
        paths[f"{role}_key"] = folder / f"{role}-key.pem"
        paths[f"{role}_cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, paths[f"{role}_key"])
    return TlsFiles(
        ca=paths["ca"],
        server_cert=paths["server_cert"],
        server_key=paths["server_key"],
        client_cert=paths["client_cert"],
        client_key=paths["client_key"],
    )
