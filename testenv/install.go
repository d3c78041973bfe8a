package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// debianJavaDir is where Debian's zookeeper package installs its jars. Its
// zookeeper.jar names its dependencies in the manifest's Class-Path.
const debianJavaDir = "/usr/share/java"

// debianExtraJars complete the classpath of Debian's zookeeper.jar, whose
// manifest names only part of what runs: slf4j-simple, so that server logs
// reach the log file, and the Netty modules (from libnetty-java, a
// dependency of the package) that the Netty connection factory of a secure
// client port loads besides the ones the manifest lists.
var debianExtraJars = []string{
	"slf4j-simple.jar",
	"netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar",
}

// installation is a Java runtime and the classpath of a ZooKeeper server.
type installation struct {
	java      string
	classpath []string
}

// findInstallation locates java and ZooKeeper, in that order, returning
// ErrJavaNotFound or ErrZooKeeperNotFound with install hints.
func findInstallation() (installation, error) {
	java, err := findJava()
	if err != nil {
		return installation{}, err
	}
	cp, err := findZooKeeper()
	if err != nil {
		return installation{}, err
	}
	return installation{java: java, classpath: cp}, nil
}

// findJava prefers $JAVA_HOME/bin/java, then java on PATH.
func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if isFile(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", ErrJavaNotFound
	}
	return p, nil
}

// findZooKeeper returns the server's classpath: $ZOOKEEPER_HOME/lib/*.jar
// (plus jars at the release's top level), or Debian's zookeeper.jar with
// debianExtraJars.
func findZooKeeper() ([]string, error) {
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		jars, err := releaseJars(home)
		if err != nil {
			return nil, fmt.Errorf("%w (ZOOKEEPER_HOME=%s: %v)", ErrZooKeeperNotFound, home, err)
		}
		return jars, nil
	}
	main := filepath.Join(debianJavaDir, "zookeeper.jar")
	if !isFile(main) {
		return nil, ErrZooKeeperNotFound
	}
	cp := []string{main}
	for _, jar := range debianExtraJars {
		if p := filepath.Join(debianJavaDir, jar); isFile(p) {
			cp = append(cp, p)
		}
	}
	return cp, nil
}

// releaseJars lists the jars of an Apache binary release unpacked at home.
func releaseJars(home string) ([]string, error) {
	var jars []string
	for _, pattern := range []string{"lib/*.jar", "*.jar"} {
		m, err := filepath.Glob(filepath.Join(home, pattern))
		if err != nil {
			return nil, err
		}
		jars = append(jars, m...)
	}
	if len(jars) == 0 {
		return nil, fmt.Errorf("no jars in %s/lib", home)
	}
	sort.Strings(jars)
	return jars, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
