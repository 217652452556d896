module github.com/nicdiag/nicdiag

go 1.26.8

require (
	github.com/jaypipes/ghw v0.27.0
	github.com/jaypipes/pcidb v1.1.1
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.74.0
	github.com/prometheus/procfs v0.23.0
	github.com/safchain/ethtool v0.7.0
	github.com/vishvananda/netlink v1.3.1
	github.com/vishvananda/netns v0.0.5
	golang.org/x/sys v0.50.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/go-ole/go-ole v1.2.6 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pandatix/go-abnf v0.5.5 // indirect
	github.com/yusufpapurcu/wmi v1.2.4 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	howett.net/plist v1.0.2-0.20250314012144-ee69052608d9 // indirect
)
