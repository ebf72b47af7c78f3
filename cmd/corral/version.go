package main

// Version is corral's version. The 4lw and envi outputs report a
// ZooKeeper-shaped version string built from it (see server/flw).
const Version = "0.1.0"
