module tegclient

go 1.19
