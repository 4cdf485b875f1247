module github.com/pb-fleet/pb-fleet/clients/go

go 1.22
