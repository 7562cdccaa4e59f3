"""Production settings: `check --deploy` passes with the environment docs/deploy.md documents,
and the security headers are there."""

import subprocess
import sys

from tests.support.live_server import ROOT, project_env

DEPLOY_ENV = {
    "DEBUG": "false",
    "SECRET_KEY": "a-production-secret-key-that-is-long-and-random-0123456789-abcdefghij",
    "ALLOWED_HOSTS": "chat.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://chat.example.com",
    "SECURE_PROXY_SSL_HEADER": "true",
    "SECURE_HSTS_PRELOAD": "true",
}


def run(*args, env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_the_documented_environment():
    """No warnings from Django's deployment checklist."""
    result = run("check", "--deploy", "--fail-level", "WARNING", env=project_env(**DEPLOY_ENV))
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_deploy_fails_without_a_secret_key():
    """DEBUG off and no SECRET_KEY: refused with a clear message."""
    env = project_env(**{**DEPLOY_ENV, "SECRET_KEY": ""})
    result = run("check", "--deploy", env=env)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_production_responses_carry_the_security_headers(tmp_path):
    """HSTS, CSP (scripts from this origin only), no framing, nosniff, secure cookies."""
    code = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "r = Client().get('/accounts/login/', secure=True, HTTP_HOST='chat.example.com')\n"
        "print(r.status_code)\n"
        "for h in ('Strict-Transport-Security', 'Content-Security-Policy', 'X-Frame-Options',"
        " 'X-Content-Type-Options', 'Referrer-Policy'): print(h, '=', r.headers.get(h))\n"
        "print('csrf-secure', r.cookies['csrftoken']['secure'] if 'csrftoken' in r.cookies "
        "else 'none')\n"
    )
    env = project_env(
        **DEPLOY_ENV, STATIC_ROOT=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}"
    )
    assert run("collectstatic", "--noinput", env=env).returncode == 0
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    out = result.stdout
    assert out.startswith("200"), result.stderr
    assert "Strict-Transport-Security = max-age=31536000; includeSubDomains; preload" in out
    # django-csp does not keep the directives in a fixed order: compare them as a set.
    policy = next(line for line in out.splitlines() if line.startswith("Content-Security-Policy"))
    directives = {part.strip() for part in policy.split(" = ", 1)[1].split(";")}
    assert "script-src 'self'" in directives and "frame-ancestors 'none'" in directives
    assert "X-Frame-Options = DENY" in out and "X-Content-Type-Options = nosniff" in out
    assert "csrf-secure True" in out
