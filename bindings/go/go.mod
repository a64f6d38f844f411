module minlsh.example/minlsh

go 1.19
