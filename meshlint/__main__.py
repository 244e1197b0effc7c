from meshlint.entry import main

main()
