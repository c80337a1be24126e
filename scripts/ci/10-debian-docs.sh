# The Debian reference manual: a real document collection nobody here wrote,
# for the local corpus provider's tests.
apt_install debian-reference-en
