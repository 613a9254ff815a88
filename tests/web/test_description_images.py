"""Competition descriptions: images on other hosts become links, so a reader's browser contacts
those hosts only when the reader asks."""

from __future__ import annotations

from leaderboard.templatetags.medalboard import render_markdown


def test_external_images_become_links_and_nothing_loads():
    html = render_markdown('![IoU "diagram"](https://storage.googleapis.com/k/IoU.jpg)\n\n'
                           '<img src="//evil.example/track.gif" alt="x" onerror="alert(1)">')
    assert "<img" not in html and "onerror" not in html
    assert ('<a class="external-image" href="https://storage.googleapis.com/k/IoU.jpg" '
            'rel="noopener noreferrer nofollow" target="_blank"') in html
    assert "[IoU &quot;diagram&quot;: load image from storage.googleapis.com]" in html
    assert 'href="//evil.example/track.gif"' in html and "load image from evil.example" in html


def test_relative_images_stay_and_scripts_stay_out():
    html = render_markdown('![local](/static/img/a.png) <script>alert(1)</script>')
    assert '<img alt="local" src="/static/img/a.png">' in html and "<script" not in html


def test_every_catalogue_description_renders_without_external_images(client, catalogue):
    for competition in catalogue.exclude(description=""):
        html = render_markdown(competition.description)
        assert "<img" not in html or all('src="http' not in part and 'src="//' not in part
                                         for part in html.split("<img")[1:]), competition.slug
