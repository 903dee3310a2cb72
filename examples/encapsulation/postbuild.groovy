// The build failed (invoker.properties); make sure javac refused the internal package, and that
// it did not fail for another reason (a missing artifact, a typo) that would hide a leak.
def log = new File(basedir, 'build.log').text
assert log.contains('package dev.locksmith.internal is not visible') :
        "expected javac to refuse dev.locksmith.internal; build.log:\n" + log
assert log.contains('does not export it') : "expected 'does not export it' in build.log"
assert !log.contains('dev.locksmith.jobs is not visible') : 'the exported API must stay reachable'
println 'encapsulation: javac refused dev.locksmith.internal (module dev.locksmith.core does not export it)'
return true
