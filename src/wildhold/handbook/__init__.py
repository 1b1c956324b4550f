"""The documentation site (mkdocs.yml and docs/ in a checkout): the reference pages generated from the code at build
time (`reference`), and building or serving the site (`site`)."""
