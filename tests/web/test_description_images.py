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


def test_relative_and_mistyped_sources_ask_nothing_of_this_site():
    """A relative source would be asked of this site beside the competition's page (a 404 in the console):
    an address it holds becomes a link, anything else the image's name."""
    html = render_markdown("![specimen2](!https://raw.example.org/a/specimen2.jpg)\n\n![chart](images/chart.png)")
    assert "<img" not in html
    assert 'href="https://raw.example.org/a/specimen2.jpg"' in html and "load image from raw.example.org" in html
    assert "[chart: image not included]" in html


def test_catalogue_descriptions_keep_only_images_at_paths_of_this_site(catalogue):
    for competition in catalogue.exclude(description=""):
        for part in render_markdown(competition.description).split("<img")[1:]:
            src = part.split('src="')[1].split('"')[0]
            assert src.startswith("/") and not src.startswith("//"), (competition.slug, src)
