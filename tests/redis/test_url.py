"""Redis URLs: the forms read, the ones refused, and passwords never shown."""

from __future__ import annotations

import pytest

from transports._redis import RedisAddress, mask_url, parse_redis_url

PARSED = [
    ("redis://localhost", RedisAddress(host="localhost")),
    ("redis://127.0.0.1:6380", RedisAddress(port=6380)),
    ("redis://127.0.0.1:6380/", RedisAddress(port=6380)),
    ("redis://cache.internal/3", RedisAddress(host="cache.internal", db=3)),
    ("REDIS://Cache.Internal:7000/15", RedisAddress(host="cache.internal", port=7000, db=15)),
    ("redis://[::1]:6390", RedisAddress(host="::1", port=6390)),
    ("redis://:s3cret@host", RedisAddress(host="host", password="s3cret")),
    ("redis://alice:s3cret@host:1/2", RedisAddress("host", 1, None, "alice", "s3cret", 2)),
    ("redis://:p%40ss%3Aw%2Frd@host", RedisAddress(host="host", password="p@ss:w/rd")),
    ("redis://:@host", RedisAddress(host="host", password="")),
    ("rediss://host:6380", RedisAddress(host="host", port=6380, tls=True)),
    ("rediss://:pw@host/1", RedisAddress(host="host", password="pw", db=1, tls=True)),
    ("unix:///run/redis.sock", RedisAddress(unix_path="/run/redis.sock")),
    ("unix:///run/redis.sock?db=4", RedisAddress(unix_path="/run/redis.sock", db=4)),
    ("unix://:pw@/tmp/r.sock", RedisAddress(unix_path="/tmp/r.sock", password="pw")),
]


@pytest.mark.parametrize(("url", "expected"), PARSED, ids=[url for url, _ in PARSED])
def test_a_url_names_its_address(url: str, expected: RedisAddress) -> None:
    assert parse_redis_url(url) == expected


REFUSED = [
    ("http://host", "scheme 'http'"),
    ("host:6379", "scheme"),
    ("", "scheme"),
    ("redis://", "no host"),
    ("redis://:pw@", "no host"),
    ("redis://host:0", "port"),
    ("redis://host:99999", "port"),
    ("redis://host:port", "port"),
    ("redis://host/x", "database 'x'"),
    ("redis://host/-1", "database '-1'"),
    ("redis://host/1?db=2", "twice"),
    ("redis://host?timeout=3", "'timeout'"),
    ("redis://host#frag", "fragment"),
    ("redis://[::1", "invalid Redis URL"),
    ("unix://", "no socket path"),
    ("unix://localhost/run/redis.sock", "names no host"),
    ("unix:///run/redis.sock?db=a", "database 'a'"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED, ids=[url for url, _ in REFUSED])
def test_a_url_that_is_not_a_redis_url_is_refused_with_the_reason(url: str, reason: str) -> None:
    with pytest.raises(ValueError, match="invalid Redis URL") as refused:
        parse_redis_url(url)
    assert reason in str(refused.value)


SECRET = "hunter2"
LEAKY = [
    f"redis://:{SECRET}@host:port",  # (a bad port: the message quotes the URL)
    f"redis://alice:{SECRET}@host/x",
    f"redis://{SECRET}@host",  # (a password where the user name goes)
    f"ftp://:{SECRET}@host",
    f"unix://:{SECRET}@localhost/sock",
    f"unix:///sock?password={SECRET}",
    f"redis://:{SECRET}@[::1",
]


@pytest.mark.parametrize("url", LEAKY)
def test_an_error_never_shows_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="invalid Redis URL") as refused:
        parse_redis_url(url)
    assert SECRET not in str(refused.value)
    assert "***" in str(refused.value)


def test_the_repr_of_an_address_masks_its_password() -> None:
    address = parse_redis_url(f"redis://alice:{SECRET}@host/1")
    assert SECRET not in repr(address)
    assert "password='***'" in repr(address)
    assert "username='alice'" in repr(address)
    assert "password=None" in repr(RedisAddress())


MASKED = [
    ("redis://:pw@host/1", "redis://:***@host/1"),
    ("redis://u:pw@host", "redis://u:***@host"),
    ("redis://pw@host", "redis://***@host"),
    ("redis://u:p@w@host", "redis://u:***@host"),  # (the last '@' ends the user info)
    ("redis://host/1", "redis://host/1"),
    ("redis://host/a@b", "redis://host/a@b"),
    ("unix:///s?db=1&password=pw", "unix:///s?db=1&password=***"),
    ("no scheme", "no scheme"),
]


@pytest.mark.parametrize(("url", "masked"), MASKED)
def test_mask_url_hides_the_password_and_nothing_else(url: str, masked: str) -> None:
    assert mask_url(url) == masked


def test_where_names_the_server_for_messages() -> None:
    assert parse_redis_url("redis://:pw@host:7000").where == "host:7000"
    assert parse_redis_url("redis://[::1]").where == "[::1]:6379"
    assert parse_redis_url("unix:///run/r.sock").where == "unix:/run/r.sock"
