"""Uploads over HTTP to gunicorn, scored by the Celery worker, checked through the API."""

import io
import zipfile

from challenge_site.submissions.models import Score, SplitResult, Submission

from .client import Client
from .conftest import orm, wait_final
from .data import prediction_zip


def test_health_and_static_files_under_gunicorn(stack):
    client = Client(stack.base_url)
    assert client.get("/healthz").text == "ok"
    home = client.get("/")
    assert home.status == 200
    # DJANGO_DEBUG=0: collected, hashed static files served by WhiteNoise.
    css = next(part for part in home.text.split('"') if part.endswith(".css"))
    assert css.startswith("/static/css/site.") and css != "/static/css/site.css"
    assert client.get(css).status == 200
    assert client.get("/no-such-page/").status == 404


def test_api_upload_is_scored_by_the_worker(stack, challenge, api):
    spec = challenge["datasets"]["sines"]
    response = api.api_submit("stack", prediction_zip("sines", spec, ("train", "val")))
    assert response.status == 201, response
    body = response.json()
    assert body["status"] == "queued"  # a real worker scores it, not the request
    assert response.headers["Location"] == body["api_url"]
    assert wait_final(stack, [body["id"]]) == {body["id"]: "scored"}
    scored = api.get(f"/api/v1/submissions/{body['id']}/").json()
    assert scored["status"] == "scored" and scored["errors"] == []
    assert set(scored["scores"]) == {"train", "val"}
    assert scored["scores"]["val"]["nlpd"] is not None
    rows = orm(lambda: Score.objects.filter(submission_id=body["id"]).count())
    assert rows == sum(len(losses) for losses in scored["scores"].values())
    assert orm(lambda: SplitResult.objects.filter(submission_id=body["id"]).count()) == 2


def test_form_upload_and_the_owners_zip(stack, challenge, participant):
    client = Client(stack.base_url)
    client.login(participant["username"], "a-long-Passphrase-42")
    data = prediction_zip("coins", challenge["datasets"]["coins"])
    response = client.form_submit("stack", data, method="Logistic regression")
    assert response.status == 302, response
    pk = int(response.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    assert wait_final(stack, [pk]) == {pk: "scored"}
    page = client.get(f"/submissions/{pk}/")
    assert "Scored" in page.text and "Logistic regression" in page.text
    stored = client.get(f"/submissions/{pk}/file.zip")
    assert stored.status == 200 and stored.body == data
    assert Client(stack.base_url).get(f"/submissions/{pk}/file.zip").status == 404
    assert zipfile.ZipFile(io.BytesIO(stored.body)).namelist() == ["coins_val_predict.txt"]
    assert orm(lambda: Submission.objects.get(pk=pk).attempts) == 1
