"""The web pages of a served match: the live page, matches, the leaderboard and profiles."""
