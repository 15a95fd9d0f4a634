"""Imported by our fork servers (``set_forkserver_preload``): a fork server dies
with the process that started it (``sandcrawler.process.lifetime``). Importing this
module has that effect on purpose: a preload list is the one hook that runs
in a fork server before it forks anything."""

from sandcrawler.process.lifetime import die_with_parent

die_with_parent()
