"""The redaction rules that are not detect-secrets' plugins, as data: one regular expression per kind.

Each rule finds spans of a text; :mod:`._redactor` merges them with detect-secrets' findings and
replaces each span with a placeholder that is stable within a corpus. Home paths are the one rule
whose replacement is fixed (``/home/alice/x`` -> ``~/x``): the user name it names is learnt, and
the name's other occurrences become a ``user`` placeholder.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Rule", "RULES", "HOME", "PROMPT", "ENCODED_HOME", "GENERIC_USERS", "PUBLIC_DOMAINS", "spans",
           "is_placeholder", "PLACEHOLDER"]

#: what every placeholder looks like: ``[REDACTED-<kind>-<n>]`` (no quote, backslash, slash or colon,
#: so it stays valid inside JSON text and in a file name)
PLACEHOLDER = re.compile(r"\[REDACTED-[a-z0-9-]+-\d+\]")


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of finding: a pattern whose ``group`` is the part replaced."""

    kind: str
    pattern: re.Pattern[str]
    group: int = 0
    doc: str = ""
    #: the rule runs only on a text holding one of these (lower case: in the lower-cased text)
    needles: tuple[str, ...] = ()
    lower: bool = False


def _r(kind: str, pattern: str, group: int = 0, doc: str = "", flags: int = 0, needles: str = "",
       lower: bool = False) -> Rule:
    return Rule(kind, re.compile(pattern, flags), group, doc, tuple(needles.split()), lower)


_B64 = r"[A-Za-z0-9+/]"
RULES: tuple[Rule, ...] = (
    _r("private-key", r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
       r"|(?:[A-Za-z0-9+/=\s:,-]|\\[nr])*)", doc="PEM private keys (RSA, EC, DSA, OpenSSH, PGP, PKCS#8), the "
       "whole block, or up to the end of the key material when the END line is missing", flags=re.DOTALL,
       needles="PRIVATE"),
    _r("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", doc="Anthropic API keys (sk-ant-...)", needles="sk-ant-"),
    _r("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
       doc="OpenAI-style keys (sk-..., sk-proj-...)", needles="sk-"),
    _r("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}", doc="Google API keys (AIza...)", needles="AIza"),
    _r("google-oauth-token", r"\bya29\.[0-9A-Za-z_-]{20,}", doc="Google OAuth access tokens (ya29....)",
       needles="ya29."),
    _r("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}", doc="Hugging Face tokens (hf_...)", needles="hf_"),
    _r("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
       doc="GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)", needles="ghp_ gho_ ghu_ ghs_ ghr_ github_pat_"),
    _r("gitlab-token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}", doc="GitLab tokens (glpat-...)",
       needles="glpat- gldt- glrt- glptt- glcbt- gloas-"),
    _r("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", doc="npm tokens (npm_...)", needles="npm_"),
    _r("pypi-token", r"\bpypi-[A-Za-z0-9_-]{50,}", doc="PyPI upload tokens (pypi-...)", needles="pypi-"),
    _r("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", doc="Slack tokens (xoxb-, xoxp-...)", needles="xox"),
    _r("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+", doc="Slack webhook URLs",
       needles="hooks.slack.com"),
    _r("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}", doc="Stripe keys", needles="_live_ _test_"),
    _r("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", doc="SendGrid keys (SG.x.y)", needles="SG."),
    _r("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b", doc="AWS access key ids",
       needles="AKIA ASIA AGPA AIDA AROA ANPA ANVA AIPA"),
    _r("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", doc="JSON Web Tokens", needles="eyJ"),
    _r("bearer-token", r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/-]{16,}=*)", group=1,
       doc="the credential after 'Bearer' or 'token' (HTTP Authorization headers)", needles="bearer token", lower=True),
    _r("url-password", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@\"']+:([^/\s@\"']+)@", group=1,
       doc="passwords in URLs (scheme://user:password@host)", needles="://"),
    _r("assigned-secret",
       r"(?i)(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|apikey|access[_-]?key|"
       r"private[_-]?key|credentials?|auth[_-]?key|signing[_-]?key|client[_-]?secret|session[_-]?key)"
       r"[\"']?\s*(?:=|:|=>)\s*[\"']?((?![$<{(\[%]|os\.|process\.env|env\.|null\b|none\b|true\b|false\b|undefined\b)"
       r"[^\s\"'`,;)}\]]{8,})",
       group=1, doc="the value of an assignment whose name ends in secret, token, password, api_key, access_key, "
       "private_key, credential(s), auth_key, signing_key, session_key (.env lines, config, JSON, YAML), "
       "8 characters or more and not a reference ($VAR, ${...}, <...>, os.environ, process.env)",
       needles="secret token passw pwd key credential", lower=True),
    _r("azure-connection-key", r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=([^;\s\"'&]{16,})",
       group=1, doc="keys in Azure connection strings and SAS URLs",
       needles="accountkey sharedaccess sig=", lower=True),
    _r("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
       doc="email addresses (not noreply@..., git@..., or at example.com/org/net)", needles="@"),
    _r("private-ip", r"\b(?:10(?:\.\d{1,3}){3}|192\.168(?:\.\d{1,3}){2}|172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2})\b",
       doc="private IPv4 addresses (10/8, 172.16/12, 192.168/16)", needles="10. 192.168. 172."),
    _r("public-ip", r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]|\.\d)", doc="other IPv4 addresses, "
       "but loopback, 0.0.0.0, netmasks and version-like numbers (every part below 32)", needles="."),
    _r("host", r"(?i)\b[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
       r"\.(?:internal|local|lan|corp|intranet|localdomain|home\.arpa|private|intra)\b(?![./-]?[a-z0-9])",
       doc="host names under private suffixes (.internal, .local, .lan, .corp, .intranet, .localdomain, "
       ".home.arpa, .private, .intra)",
       needles=".internal .local .lan .corp .intranet .localdomain .home.arpa .private .intra", lower=True),
    _r("host", r"(?i)\b[a-z][a-z0-9+.-]*://(?:[^/\s@\"']+@)?([a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9]"
       r"(?:[a-z0-9-]*[a-z0-9])?)+)", group=1, doc="the host of a URL, unless it is a well-known public domain "
       "(see PUBLIC_DOMAINS)", needles="://"),
    _r("high-entropy", r"(?<![A-Za-z0-9+/_=-])([A-Za-z0-9+/_-]{32,}={0,2})(?![A-Za-z0-9+/_=-])", group=1,
       doc="unquoted tokens of 32+ base64/base64url characters with upper, lower case and digits and a Shannon "
       "entropy of 4.5 bits per character or more (not hex, not UUIDs, not paths)"),
)

#: home folders: the user name is group 2; the replacement is ``~``
HOME = re.compile(r"(/home/|/Users/|\b[A-Za-z]:\\{1,2}Users\\{1,2})([A-Za-z][A-Za-z0-9._-]*)")
#: a home folder as pi and Claude Code spell a cwd in a folder name (``--home-alice-proj--``): user (1)
ENCODED_HOME = re.compile(r"(?:^|[/\\])-{1,2}(?:home|Users)-([A-Za-z][A-Za-z0-9._]*)(?=-)")
#: a shell prompt ``alice@devbox:~/x$``: user (1) and host (2)
PROMPT = re.compile(r"(?<![\w.@-])([a-z_][a-z0-9_-]{1,31})@([A-Za-z][A-Za-z0-9-]{1,62})(?=:[~/])")

#: user names too generic to replace wherever they occur as a word (their home paths still become ``~``)
GENERIC_USERS = frozenset({
    "user", "users", "root", "runner", "ubuntu", "admin", "dev", "home", "shared", "public", "guest",
    "default", "ec2-user", "vagrant", "node", "app", "www-data", "nobody", "me", "test", "linuxbrew",
    "administrator", "all users", "circleci", "jenkins", "build", "worker", "git", "docker", "local",
})

#: URL hosts left as they are: these domains and their subdomains
PUBLIC_DOMAINS = frozenset({
    "github.com", "githubusercontent.com", "github.io", "gitlab.com", "bitbucket.org", "pypi.org", "python.org",
    "pythonhosted.org", "npmjs.com", "npmjs.org", "yarnpkg.com", "anthropic.com", "claude.ai", "claude.com",
    "openai.com", "chatgpt.com", "google.com", "googleapis.com", "gstatic.com", "youtube.com",
    "stackoverflow.com", "stackexchange.com", "wikipedia.org", "mozilla.org", "w3.org", "docs.rs", "crates.io",
    "rust-lang.org", "golang.org", "go.dev", "nodejs.org", "microsoft.com", "apple.com", "readthedocs.io",
    "readthedocs.org", "example.com", "example.org", "example.net", "localhost", "schema.org", "json-schema.org",
    "jsdelivr.net", "unpkg.com", "cloudflare.com", "docker.com", "docker.io", "kubernetes.io", "apache.org",
    "gnu.org", "debian.org", "ubuntu.com", "archlinux.org", "mit.edu", "opensource.org", "creativecommons.org",
    "shields.io", "npmmirror.com", "huggingface.co", "arxiv.org", "doi.org", "medium.com", "twitter.com", "x.com",
    "linkedin.com", "reddit.com", "ietf.org", "iana.org", "sentry.io", "vercel.com", "netlify.com", "heroku.com",
    "aws.amazon.com", "amazon.com", "pytorch.org", "tensorflow.org", "numpy.org", "pandas.pydata.org",
    "pydata.org", "scipy.org", "matplotlib.org", "jupyter.org", "conda.io", "anaconda.org", "anaconda.com",
    "opencode.ai", "mariozechner.at", "npm.im", "deno.land", "bun.sh", "typescriptlang.org", "reactjs.org",
    "react.dev", "vuejs.org", "angular.io", "svelte.dev", "tailwindcss.com", "postgresql.org", "mysql.com",
    "sqlite.org", "redis.io", "mongodb.com", "nginx.org", "gitlab.io", "sourceforge.net", "pkg.go.dev",
    "golang.google.cn", "maven.org", "gradle.org", "spring.io", "ruby-lang.org", "rubygems.org", "php.net",
    "oracle.com", "java.com", "kotlinlang.org", "swift.org", "llvm.org", "gcc.gnu.org", "cmake.org",
})

_NOT_EMAIL_LOCAL = frozenset({"noreply", "no-reply", "git"})
_EXAMPLE = ("example.com", "example.org", "example.net", "users.noreply.github.com")
_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_IP_PART = re.compile(r"\d+")


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def public_host(host: str) -> bool:
    """True for a well-known public domain (or a subdomain of one) and for bare IP-like strings."""
    h = host.lower().rstrip(".")
    if all(_IP_PART.fullmatch(p) for p in h.split(".")):
        return True  # version numbers and IPs: the IP rules decide
    parts = h.split(".")
    return any(".".join(parts[i:]) in PUBLIC_DOMAINS for i in range(len(parts)))


def _keep(rule: Rule, value: str) -> bool:
    """Whether a rule's finding is a false alarm by the rule's own checks."""
    if PLACEHOLDER.search(value) or not value:
        return True
    if rule.kind == "email":
        local, _, domain = value.rpartition("@")
        d = domain.lower()
        return (local.lower() in _NOT_EMAIL_LOCAL or local.lower().startswith("noreply")
                or any(d == e or d.endswith("." + e) for e in _EXAMPLE) or d.rsplit(".", 1)[-1].isdigit())
    if rule.kind == "host" and rule.group == 1:
        return public_host(value)
    if rule.kind == "public-ip":
        parts = [int(p) for p in value.split(".")]
        return (max(parts) > 255 or max(parts) < 32 or parts[0] in (0, 10, 127, 255)
                or parts[:2] == [192, 168] or (parts[0] == 172 and 16 <= parts[1] <= 31))
    if rule.kind == "private-ip":
        return not all(0 <= int(p) <= 255 for p in value.split("."))
    if rule.kind == "assigned-secret":  # code (types, calls, paths) rather than a value
        if any(c in value for c in "()<>[]{}:") or value.startswith(("self.", "this.", "args.", "kwargs.")):
            return True
        return not (any(c.isdigit() for c in value) or not value.replace("_", "").replace(".", "")
                    .replace("-", "").isalnum() or len(value) >= 20)
    if rule.kind == "high-entropy":
        core = value.rstrip("=")
        if _HEX.fullmatch(core) or _UUID.search(core) or core.count("/") > 1 or core.count("_") > 3:
            return True
        mixed = any(c.isupper() for c in core) and any(c.islower() for c in core) and any(c.isdigit() for c in core)
        return not mixed or _entropy(core) < 4.5
    return False


def spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every rule's finding in ``text`` (they may overlap)."""
    low = ""
    for rule in RULES:
        if rule.needles:
            if rule.lower and not low:
                low = text.lower()
            within = low if rule.lower else text
            if not any(n in within for n in rule.needles):
                continue
        for m in rule.pattern.finditer(text):
            a, b = m.span(rule.group)
            if a < b and not _keep(rule, m.group(rule.group)):
                yield a, b, rule.kind


def is_placeholder(text: str) -> bool:
    """True when ``text`` is exactly one placeholder."""
    return PLACEHOLDER.fullmatch(text) is not None
