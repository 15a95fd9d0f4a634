from sandcrawler.cli import main

main()
