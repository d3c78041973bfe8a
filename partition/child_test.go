package partition_test

// childEnv, when set, makes the test binary run one member instead of the
// tests (see TestCrashedMemberFailsOver).
const childEnv = "PARTITION_TEST_CHILD"

func childMain() int { return 2 }
