"""open_http_client over TLS: ``https`` URLs, with certificate verification on by default.

A test certificate authority (made here with ``cryptography``) signs a certificate for
127.0.0.1; the scripted server presents it. A client that trusts the authority talks to
the server; one with the default settings (the system's trust store) refuses it.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.transports.http_mcp_script import McpScript
from tests.transports.http_scripted_server import scripted_server
from tests.transports.trio_helpers import trio_test
from transports import ConnectionClosedError, open_http_client

TIMEOUT = 5.0


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA certificate, and a certificate and key for 127.0.0.1 it signed (PEM files)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("mcpcore test CA"))
        .issuer_name(_name("mcpcore test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file = folder / "ca.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    certificate_file = folder / "server.pem"
    certificate_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file = folder / "server.key"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_file, certificate_file, key_file


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_certificates(tmp_path_factory.mktemp("tls"))


def server_context(certificates: tuple[Path, Path, Path]) -> ssl.SSLContext:
    _, certificate_file, key_file = certificates
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate_file, key_file)
    return context


@trio_test
async def test_https_with_a_trusted_certificate(certificates: tuple[Path, Path, Path]) -> None:
    trusting = ssl.create_default_context(cafile=str(certificates[0]))
    script = McpScript("modern")
    async with (
        scripted_server(script, tls=server_context(certificates)) as server,
        open_http_client(server.url, ssl_context=trusting, timeout=TIMEOUT) as client,
    ):
        assert server.url.startswith("https://")
        answer = await client.call_tool("echo", {"over": "tls"})
        assert answer.content[0].text == "echo: {'over': 'tls'}"  # type: ignore[union-attr]
        await client.call_tool("echo")
    assert server.connections == 1  # kept alive, TLS and all


@trio_test
async def test_an_unknown_certificate_is_refused_by_default(
    certificates: tuple[Path, Path, Path],
) -> None:
    script = McpScript("modern")
    async with scripted_server(script, tls=server_context(certificates)) as server:
        with pytest.raises(ConnectionClosedError, match="TLS") as raised:
            async with open_http_client(server.url, timeout=TIMEOUT):
                pass
        assert "certificate" in str(raised.value).lower()
        assert not server.requests  # nothing was sent
