"""One colour per character: chosen by its name, never by its rank, the same in every match it plays; no two
characters of a match share one while the palette has colours left."""

from __future__ import annotations

from wildhold.looks.palette import PALETTE, colours, own_colour


def test_a_name_keeps_its_colour_whoever_else_plays_and_however_they_rank():
    alone = colours(["scout"])["scout"]
    assert alone == PALETTE[own_colour("scout")]
    for others in (["pilgrim"], ["pilgrim", "trader-1", "raider-2"], ["meta-llama/Llama-3.1-8B"]):
        assert colours(["scout", *others])["scout"] == alone


def test_characters_of_one_match_never_share_a_colour_until_the_palette_runs_out():
    names = [f"agent-{i}" for i in range(len(PALETTE))]
    assert len(set(colours(names).values())) == len(PALETTE)
    clash = next(n for n in (f"x{i}" for i in range(1000)) if own_colour(n) == own_colour("scout"))
    got = colours(["scout", clash])
    assert got["scout"] == PALETTE[own_colour("scout")] and got[clash] != got["scout"]  # the earlier joiner keeps its own
    assert set(colours([*names, "one-more"]).values()) <= set(PALETTE)
