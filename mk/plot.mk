# trainc plot / show --lr-plot write SVG themselves; the tests render it with rsvg-convert.
DEB_PACKAGES += librsvg2-bin
