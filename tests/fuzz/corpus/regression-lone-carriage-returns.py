# sIgnaturet:3 oal0besk > 0:
     # signa