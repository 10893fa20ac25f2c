"""The wiki: concept files, promotion, and the wiki-wide check over every run and concept."""
