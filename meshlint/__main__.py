from meshlint.cli import main

main()
