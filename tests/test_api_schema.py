"""The OpenAPI schema (challenge_site/api_schema.py): served, checked in, complete, valid;
and the reference page that reads it."""

import json
import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver

from challenge_site import api_schema

ROOT = Path(__file__).resolve().parent.parent
CHECKED_IN = ROOT / "docs" / "openapi.yaml"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def served():
    """The schema as /api/v1/schema/ generates it (once for the module: ~1 s)."""
    return api_schema.schema_document()


def _api_paths(patterns=None, prefix="") -> set[str]:
    """Every URL of an API view in the URL table, written as OpenAPI writes paths."""
    out = set()
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            out |= _api_paths(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "cls"):
            out.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    return out


def test_the_checked_in_file_is_the_served_schema(client):
    """docs/openapi.yaml is regenerated (`make schema`) whenever the API changes."""
    answer = client.get("/api/v1/schema/")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("application/vnd.oai.openapi")
    assert yaml.safe_load(answer.content) == yaml.safe_load(CHECKED_IN.read_text()), (
        "docs/openapi.yaml differs from the served schema: run `make schema`"
    )


def test_json_on_request_and_the_same_document(client):
    yaml_answer = client.get("/api/v1/schema/")
    json_answer = client.get("/api/v1/schema/?format=json")
    assert json_answer.status_code == 200
    assert json_answer["Content-Type"].startswith("application/vnd.oai.openapi+json")
    document = json.loads(json_answer.content)
    assert document == yaml.safe_load(yaml_answer.content)
    assert document["openapi"] == "3.1.0"


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        ("application/json", "application/json"),
        ("application/yaml", "application/yaml"),
        ("*/*", "application/vnd.oai.openapi"),
    ],
)
def test_the_accept_header_chooses_the_format(client, accept, media_type):
    answer = client.get("/api/v1/schema/", HTTP_ACCEPT=accept)
    assert answer.status_code == 200
    assert answer["Content-Type"].split(";")[0] == media_type
    load = json.loads if "json" in media_type else yaml.safe_load
    assert load(answer.content)["openapi"] == "3.1.0"


def test_an_unknown_format_is_a_clear_404_not_a_500(client):
    answer = client.get("/api/v1/schema/?format=xml")
    assert answer.status_code == 404
    assert json.loads(answer.content) == {"detail": "Not found."}
    refused = client.get("/api/v1/schema/", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406
    assert "Accept" in json.loads(refused.content)["detail"]


@pytest.mark.django_db
def test_the_schema_is_public_even_with_a_bad_token(client):
    answer = client.get("/api/v1/schema/", HTTP_AUTHORIZATION="Token not-a-token")
    assert answer.status_code == 200


def test_validates_without_a_warning(tmp_path):
    """drf-spectacular's own check: the OpenAPI 3.1 meta-schema, and no warning (an
    unresolved serializer or parameter fails here)."""
    out = tmp_path / "openapi.yaml"
    call_command("spectacular", "--file", str(out), "--validate", "--fail-on-warn")
    assert yaml.safe_load(out.read_text())["openapi"] == "3.1.0"


def test_every_api_url_is_an_operation(served):
    expected = _api_paths() - {"/api/v1/schema/"}
    assert "/api/v1/submissions/{pk}/" in expected  # the walk finds the API's URLs
    # drf-spectacular names an int primary key "id".
    documented = {path.replace("{id}", "{pk}") for path in served["paths"]}
    assert documented == expected


def _operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_every_operation_documents_401_and_429_with_retry_after(served):
    for path, method, operation in _operations(served):
        responses = operation["responses"]
        assert {"401", "429"} <= set(responses), (path, method)
        assert responses["429"]["headers"]["Retry-After"]["required"] is True
        assert "WWW-Authenticate" in responses["401"]["headers"]
        # The site's own refusals, before the API (a NUL byte, a URL no route matches, a
        # declared body too large) are JSON too: {"detail": …}.
        assert set(responses["400"]["content"]) == {"application/json"}, (path, method)
        assert "detail" in str(responses["400"]["content"]["application/json"]["schema"])
        if "{" in path:
            assert set(responses["404"]["content"]) == {"application/json"}, (path, method)
        if method == "post" and path.endswith("/submissions/"):
            assert responses["413"]["content"]["application/json"]["schema"] == {
                "type": "object",
                "properties": {"detail": {"type": "string"}},
                "required": ["detail"],
            }


def test_the_sites_own_refusals_under_the_api_are_json(client, db):
    """A NUL byte (middleware), a path no route matches (views.not_found) and a declared
    body too large answer {"detail": …} under /api/, and the site's page elsewhere."""
    nul = client.get("/api/v1/challenges/?x=%00")
    assert nul.status_code == 400 and "NUL byte" in nul.json()["detail"]
    missing = client.get("/api/v1/challenges/bad%C2%84slug/")
    assert missing.status_code == 404 and missing.json() == {"detail": "Not found."}
    big = client.post(
        "/api/v1/submissions/", b"", content_type="text/plain", CONTENT_LENGTH="9000000000"
    )
    assert big.status_code == 413 and "declares 9,000,000,000 bytes" in big.json()["detail"]
    page = client.get("/challenges/bad%C2%84slug/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    assert client.get("/?x=%00")["Content-Type"].startswith("text/plain")


def test_every_operation_has_an_id_a_summary_and_a_tag(served):
    tags = {tag["name"] for tag in served["tags"]}
    ids = [operation["operationId"] for _, _, operation in _operations(served)]
    assert len(ids) == len(set(ids)) == 14
    for path, method, operation in _operations(served):
        assert operation["summary"], (path, method)
        assert operation["tags"][0] in tags, (path, method)


def test_parameters_say_which_values_they_take(served):
    board = served["paths"]["/api/v1/challenges/{slug}/datasets/{name}/leaderboard/"]["get"]
    params = {p["name"]: p for p in board["parameters"]}
    assert set(params["split"]["schema"]["enum"]) == {"val", "test", "public", "private"}
    assert set(params["view"]["schema"]["enum"]) == {"all", "best"}
    assert params["slug"]["schema"]["pattern"] == "^[-a-zA-Z0-9_]+$"
    mine = served["paths"]["/api/v1/submissions/"]["get"]
    status = next(p for p in mine["parameters"] if p["name"] == "status")
    assert set(status["schema"]["enum"]) == {
        "queued",
        "running",
        "scored",
        "invalid",
        "failed",
        "withdrawn",
    }


def test_security_schemes_token_bearer_and_session(served):
    schemes = served["components"]["securitySchemes"]
    assert schemes["tokenAuth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": 'Token-based authentication with required prefix "Token"',
    }
    assert schemes["bearerAuth"]["type"] == "http"
    assert schemes["bearerAuth"]["scheme"] == "bearer"
    assert schemes["cookieAuth"]["in"] == "cookie"
    team = served["paths"]["/api/v1/challenges/{slug}/team/"]["get"]
    assert {} not in team["security"]  # a team needs a user
    challenges = served["paths"]["/api/v1/challenges/"]["get"]
    assert {} in challenges["security"]  # anyone may list the challenges


def test_files_are_documented_with_their_media_types(served):
    paths = served["paths"]
    zip_answer = paths["/api/v1/challenges/{slug}/datasets/{name}.zip"]["get"]["responses"]
    assert set(zip_answer["200"]["content"]) == {"application/zip"}
    assert (
        "ParticipationRequired"
        in zip_answer["403"]["content"]["application/json"]["schema"]["$ref"]
    )
    csv = paths["/api/v1/challenges/{slug}/export/scores.csv"]["get"]["responses"]["200"]
    assert set(csv["content"]) == {"text/csv"}
    upload = paths["/api/v1/submissions/"]["post"]["requestBody"]["content"]
    assert set(upload) == {"multipart/form-data"}


def test_field_errors_are_lists_of_messages_per_field(served):
    shape = served["components"]["schemas"]["FieldErrors"]
    assert shape["additionalProperties"] == {"type": "array", "items": {"type": "string"}}
    refused = served["paths"]["/api/v1/submissions/"]["post"]["responses"]["400"]
    # The field errors, or the site's {"detail": …} to a NUL byte before any view.
    shapes = refused["content"]["application/json"]["schema"]["anyOf"]
    assert shapes[0]["$ref"].endswith("/FieldErrors") and "detail" in shapes[1]["properties"]


# --- The reference page ---------------------------------------------------------------


def test_the_reference_page_loads_swagger_ui_from_static_files_and_no_inline_script(client):
    answer = client.get("/api/docs/")
    assert answer.status_code == 200
    html = answer.content.decode()
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    sources = [re.search(r'src="([^"]+)"', attributes).group(1) for attributes, _ in scripts]
    assert all(body.strip() == "" for _, body in scripts)  # every script is a file
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in sources
    assert "/static/api/swagger-init.js" in sources
    assert not any(source.startswith(("http:", "https:", "//")) for source in sources)
    assert 'data-schema-url="/api/v1/schema/?format=json"' in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui.css" in html
    # The site's policy, unchanged for this page.
    policy = dict(
        directive.strip().split(" ", 1)
        for directive in answer["Content-Security-Policy"].split(";")
    )
    assert policy["script-src"] == policy["style-src"] == "'self'"


@pytest.mark.django_db
def test_the_profile_links_the_reference_page(client):
    from tests.factories import make_user

    client.force_login(make_user("ada"))
    html = client.get("/accounts/profile/").content.decode()
    token_section = html[html.index('id="token"') :]
    assert 'href="/api/docs/"' in token_section


@pytest.mark.browser
def test_the_reference_page_renders_in_chromium_without_a_policy_violation(live_server, tmp_path):
    """Swagger UI draws every operation under the site's Content-Security-Policy: no
    console error, no CSP violation, no failed request (a screenshot where
    API_DOCS_SCREENSHOT names a file)."""
    import os

    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium")
    problems = []
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on(
                "console",
                lambda message: problems.append(message.text) if message.type == "error" else None,
            )
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("requestfailed", lambda request: problems.append(request.url))
            # The page's own listener: every violation, whatever the console prints.
            page.add_init_script(
                "window.__csp = []; document.addEventListener('securitypolicyviolation',"
                " e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
            )
            page.goto(f"{live_server.url}/api/docs/", wait_until="load")
            page.wait_for_selector(".opblock", timeout=30_000)
            operations = page.eval_on_selector_all(".opblock", "nodes => nodes.map(n => n.id)")
            violations = page.evaluate("window.__csp")
            if os.environ.get("API_DOCS_SCREENSHOT"):
                page.screenshot(path=os.environ["API_DOCS_SCREENSHOT"], full_page=False)
        finally:
            browser.close()
    assert len(set(operations)) == 14, operations
    assert "operations-submissions-submissions_create" in operations
    assert violations == []
    assert problems == []
